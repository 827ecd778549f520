import { clearedCookieHeader, cookieHeader, deviceCookieName, SESSION_COOKIE, type Config, type ResponseControl } from '../../server/src/index.ts';

/**
 * The Set-Cookie values for what a procedure's answer handed over (ResponseControl): the
 * session cookie for a sign-in, with the device cookie of a client new to the account, or
 * the session cookie cleared for a logout. Taken once: the REST, tRPC and page adapters each
 * call this as they write the answer, and a second call finds nothing.
 */
export function takeSessionCookies(config: Pick<Config, 'publicUrl'>, response: ResponseControl): string[] {
  const cookies: string[] = [];
  const { signedIn, signedOut } = response;
  if (signedIn) {
    cookies.push(cookieHeader(config, SESSION_COOKIE, signedIn.token, signedIn.maxAgeSeconds));
    if (signedIn.device) cookies.push(cookieHeader(config, deviceCookieName(config.publicUrl), signedIn.device.token, signedIn.device.maxAgeSeconds));
  }
  if (signedOut) cookies.push(clearedCookieHeader(config, SESSION_COOKIE));
  response.signedIn = undefined;
  response.signedOut = undefined;
  return cookies;
}
