import type { Context as KoaContext, Next } from 'koa';
import { createContextInner, SESSION_COOKIE, type BrowserWrite, type Config, type Context, type Credentials, type Deps, type RequestInfo, type ResponseControl } from '../../server/src/index.ts';
import { contentTypeOf, headerText } from './http.ts';

// The gateway's half of a procedure's context (server/src/trpc/context.ts): the request's
// facts and credentials going in, seen once before any route runs, and the session an
// answer hands back, coming out as cookies. REST, tRPC and the pages all use both. Below
// them, how credentials travel in HTTP headers, written once: the Bearer token of
// `Authorization`, and the cookies, read from `Cookie` and set with the attributes every
// Gatehouse cookie has (the pages' own cookies and GET /metrics use these too).

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The device cookie: a signed token saying this client signed in to the account before (sessions.issue.ts). */
const DEVICE_COOKIE = 'svc_device';
/**
 * The device cookie's name over https: a browser keeps a `__Host-` cookie only if it came
 * with Secure and Path=/ and without Domain, so a subdomain cannot plant or widen one.
 */
const HOST_DEVICE_COOKIE = `__Host-${DEVICE_COOKIE}`;

/**
 * What a procedure's context needs to know of the request besides its credentials, seen
 * once, before any route runs: who sent it (ip, user agent), its id, and for a write that a
 * browser could have sent, where it came from and whether it is JSON (read before REST names
 * an empty body JSON). REST, tRPC and the pages hand this very object to the procedures, and
 * the access log reads the account a procedure authenticated from it (http.ts).
 */
export function describeRequest(config: Config) {
  const trusted = trustedOrigins(config);
  return (ctx: KoaContext, next: Next) => {
    const info: RequestInfo = {
      ip: ctx.ip,
      userAgent: headerText(ctx.get('user-agent')) || undefined,
      requestId: ctx.state.requestId,
      browserWrite: browserWriteOf(ctx, trusted),
    };
    ctx.state.requestInfo = info;
    return next();
  };
}

/** The request as describeRequest saw it. */
export const requestInfoOf = (ctx: KoaContext): RequestInfo => ctx.state.requestInfo;

/**
 * A procedure's context for this request: the credentials its headers carry (the pages pass
 * the cookie alone) and the request as describeRequest saw it.
 */
export function procedureContextOf(deps: Deps, ctx: KoaContext, headers: CredentialHeaders = ctx.req.headers): Context {
  return createContextInner(deps, credentialsFromHeaders(headers), requestInfoOf(ctx));
}

type CredentialHeaders = { authorization?: string; cookie?: string };

/**
 * The caller's credentials: a Bearer token (an API key or a session JWT) if there is an
 * Authorization header, else the session cookie; and the device cookie either way.
 */
export function credentialsFromHeaders(headers: CredentialHeaders): Credentials {
  // Both names, whatever PUBLIC_URL says: a `__Host-` one only ever arrives over https, and
  // a plain one set before the switch to it keeps counting until it expires.
  const device = readCookie(headers.cookie, HOST_DEVICE_COOKIE) ?? readCookie(headers.cookie, DEVICE_COOKIE);
  if (headers.authorization) return { bearer: bearerToken(headers.authorization) ?? '', device };
  return { cookie: readCookie(headers.cookie, SESSION_COOKIE), device };
}

/** PUBLIC_URL's origin and CORS_ORIGINS: the sites whose pages may use the session cookie to write. */
function trustedOrigins(config: Config): Set<string> {
  return new Set([new URL(config.publicUrl).origin, ...config.corsOrigins]);
}

/**
 * For a request that could change state: where it came from and whether it is JSON. A browser
 * sends the cookie with a form posted from any site (SameSite=Lax holds back only some), so
 * a cookie-authenticated mutation needs both to be right (authedProcedure decides; Bearer
 * calls carry no ambient credential and are not asked). Read before any adapter rewrites
 * the Content-Type of an empty body.
 */
function browserWriteOf(ctx: KoaContext, trusted: Set<string>): BrowserWrite | undefined {
  if (SAFE_METHODS.has(ctx.method)) return undefined;
  return { crossSite: !fromTrustedOrigin(ctx.get('origin'), ctx.get('sec-fetch-site'), trusted), json: contentTypeOf(ctx).type === 'application/json' };
}

/**
 * Whether a write came from one of our origins. Browsers send `Origin: null` instead of the
 * origin when the page's referrer policy is `no-referrer`, as ours is (docs/API.md, Pages),
 * so for `null` the browser's own `Sec-Fetch-Site` decides: only `same-origin` is ours (a
 * sandboxed frame or another site's page says otherwise). Without any Origin, only a
 * browser-declared cross-site request is refused: other clients send neither header.
 */
function fromTrustedOrigin(origin: string, fetchSite: string, trusted: Set<string>): boolean {
  if (origin === 'null') return fetchSite === 'same-origin';
  if (origin) return trusted.has(origin);
  return fetchSite !== 'cross-site';
}

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
    if (signedIn.device) cookies.push(cookieHeader(config, hostCookieName(config, DEVICE_COOKIE), signedIn.device.token, signedIn.device.maxAgeSeconds));
  }
  if (signedOut) cookies.push(clearedCookieHeader(config, SESSION_COOKIE));
  response.signedIn = undefined;
  response.signedOut = undefined;
  return cookies;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The token of an `Authorization: Bearer <token>` header, or undefined for anything else. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization ? BEARER.exec(authorization)?.[1] : undefined;
}

/** The value of cookie `name` in a `Cookie` header, or undefined when absent or empty. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) {
      const value = part.slice(index + 1).trim();
      return value || undefined;
    }
  }
  return undefined;
}

/**
 * The name a cookie is set and read under: over https every cookie but `svc_token` carries
 * the `__Host-` prefix, which a browser keeps only with Secure and Path=/ and without
 * Domain, so a subdomain cannot plant or widen it.
 */
export function hostCookieName(config: { publicUrl: string }, name: string): string {
  return config.publicUrl.startsWith('https:') ? `__Host-${name}` : name;
}

/**
 * A `Set-Cookie` value with the attributes every Gatehouse cookie has: the whole site,
 * out of scripts' reach, withheld from other sites' subrequests and POSTs, and `Secure` when
 * the service is reached over https. Without `maxAgeSeconds` it lasts as long as the browser.
 */
export function cookieHeader(config: { publicUrl: string }, name: string, value: string, maxAgeSeconds?: number): string {
  const secure = config.publicUrl.startsWith('https:') ? '; Secure' : '';
  const maxAge = maxAgeSeconds === undefined ? '' : `; Max-Age=${maxAgeSeconds}`;
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax${maxAge}${secure}`;
}

/** The `Set-Cookie` value that makes a browser drop cookie `name`. */
export function clearedCookieHeader(config: { publicUrl: string }, name: string): string {
  return cookieHeader(config, name, '', 0);
}
