import type { Context as KoaContext } from 'koa';
import type { BrowserWrite, Config } from '../../server/src/index.ts';
import { contentTypeOf } from './http.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** PUBLIC_URL's origin and CORS_ORIGINS: the sites whose pages may use the session cookie to write. */
export function trustedOrigins(config: Config): Set<string> {
  return new Set([new URL(config.publicUrl).origin, ...config.corsOrigins]);
}

/**
 * For a request that could change state: where it came from and whether it is JSON. A browser
 * sends the cookie with a form posted from any site (SameSite=Lax holds back only some), so
 * a cookie-authenticated mutation needs both to be right (authedProcedure decides; Bearer
 * calls carry no ambient credential and are not asked). Read before any adapter rewrites
 * the Content-Type of an empty body.
 */
export function browserWriteOf(ctx: KoaContext, trusted: Set<string>): BrowserWrite | undefined {
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
