// The cookie helpers are written once, beside the credentials they carry.
export { clearedCookieHeader, cookieHeader, readCookie } from '../../server/src/lib/http-credentials.ts';
