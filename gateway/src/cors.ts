import type { ServerResponse } from 'node:http';
import koaCors from '@koa/cors';
import type { Context as KoaContext, Next } from 'koa';
import type { Config } from '../../server/src/index.ts';

/** The API a frontend on another origin calls: tRPC and REST. */
const CORS_PATH = /^\/(?:trpc|api\/v1)(?:\/|$)/;
/** The docs page and its files are for this origin's own visitors. */
const DOCS_PATH = /^\/api\/v1\/docs(?:\/|$)/;

const ALLOW_METHODS = ['GET', 'POST', 'PATCH', 'DELETE'];
/**
 * JSON bodies, Bearer credentials and a request id the frontend may set for tracing; and
 * `trpc-accept`, which tRPC's streaming and subscription links send (httpBatchLink sends
 * only content-type).
 */
const ALLOW_HEADERS = ['content-type', 'authorization', 'x-request-id', 'trpc-accept'];
/** Not CORS-safelisted, but a frontend needs them: when to retry, why a 401, which request. */
const EXPOSE_HEADERS = ['retry-after', 'www-authenticate', 'x-request-id'];
/** Chromium caps a preflight's cache at 2 h; 10 min lets a removed origin lose access soon after a restart. */
const MAX_AGE_SECONDS = 600;

function isPreflight(ctx: KoaContext): boolean {
  return ctx.method === 'OPTIONS' && Boolean(ctx.get('origin')) && Boolean(ctx.get('access-control-request-method'));
}

/**
 * tRPC's adapter writes its own `Vary` (trpc-accept, accept) with setHeader, which would
 * replace the `Origin` set here; a cache must still tell one origin's answer from another's.
 */
function keepVaryOrigin(res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    const vary = String(this.getHeader('vary') ?? '');
    if (!/(?:^|,)\s*origin\s*(?:,|$)/i.test(vary)) this.setHeader('Vary', vary ? `${vary}, Origin` : 'Origin');
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['writeHead'];
}

/**
 * CORS for the origins of CORS_ORIGINS on /trpc and /api/v1 (not the docs page), with
 * credentials, so a frontend served elsewhere can call the API with a Bearer token or the
 * session cookie. A listed origin is echoed, never `*`; every answer on these paths varies
 * on Origin. Headers are set before the route runs, so an error answer carries them too and
 * the frontend can read its 401 or 429. An origin not listed gets no CORS header at all, and
 * its preflight is answered here, 204 without them, so the browser reports the missing
 * Access-Control-Allow-Origin (the real cause) rather than a failed status. Webhooks, pages,
 * health and metrics never send CORS headers.
 */
export function createCors(config: Pick<Config, 'corsOrigins'>) {
  const listed = new Set(config.corsOrigins);
  const allowListed = koaCors({
    origin: (ctx) => (listed.has(ctx.get('origin')) ? ctx.get('origin') : ''),
    credentials: true,
    allowMethods: ALLOW_METHODS,
    allowHeaders: ALLOW_HEADERS,
    exposeHeaders: EXPOSE_HEADERS,
    maxAge: MAX_AGE_SECONDS,
  });
  return async function cors(ctx: KoaContext, next: Next) {
    if (!CORS_PATH.test(ctx.path) || DOCS_PATH.test(ctx.path)) return next();
    if (ctx.path.startsWith('/trpc')) keepVaryOrigin(ctx.res);
    // An origin not listed, or none (a server calling, or a same-origin page): only `Vary`,
    // as koaCors would set it before finding no origin to allow, without its two awaits.
    if (!listed.has(ctx.get('origin'))) {
      ctx.vary('Origin');
      if (!isPreflight(ctx)) return next();
      ctx.status = 204;
      return;
    }
    return allowListed(ctx, next);
  };
}
