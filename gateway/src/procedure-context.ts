import type { Context as KoaContext, Next } from 'koa';
import { clearedCookieHeader, cookieHeader, deviceCookieName, SESSION_COOKIE, type BrowserWrite, type Config, type RequestInfo, type ResponseControl } from '../../server/src/index.ts';
import { contentTypeOf, headerText } from './http.ts';

// The gateway's half of a procedure's context (server/src/trpc/context.ts): the request's
// facts going in, seen once before any route runs, and the session an answer hands back,
// coming out as cookies. REST, tRPC and the pages all use both.

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

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
    if (signedIn.device) cookies.push(cookieHeader(config, deviceCookieName(config.publicUrl), signedIn.device.token, signedIn.device.maxAgeSeconds));
  }
  if (signedOut) cookies.push(clearedCookieHeader(config, SESSION_COOKIE));
  response.signedIn = undefined;
  response.signedOut = undefined;
  return cookies;
}
