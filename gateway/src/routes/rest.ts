import type Router from '@koa/router';
import type { Context as KoaContext, Next } from 'koa';
import { AppError, appRouter, type Deps } from '../../../server/src/index.ts';
import { contentTypeOf, hasBody, jsonText, readLimitedBody } from '../http.ts';
import { procedureContextOf } from '../procedure-context.ts';
import { restRoutes } from './openapi-document.ts';
import { createOpenApiHandler, createStockOpenApiHandler } from '../fast-paths/index.ts';

const API_PREFIX = '/api/v1';
export const JSON_BODY_LIMIT = 16 * 1024;

/**
 * The body is read here, not by trpc-to-openapi: it accepts only the exact type
 * `application/json` and has no 16 KiB cap. A pre-set `req.body` is what it then uses.
 */
async function readJsonBody(ctx: KoaContext, next: Next) {
  const req = ctx.req;
  if (ctx.method === 'GET' || ctx.method === 'HEAD') return next();
  if (!hasBody(ctx)) {
    Object.assign(req, { body: {} });
  } else {
    const { type, charset } = contentTypeOf(ctx);
    if (type !== 'application/json' || (charset && charset !== 'utf-8' && charset !== 'utf8')) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE');
    }
    const raw = jsonText(await readLimitedBody(ctx, JSON_BODY_LIMIT));
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new AppError('INVALID_JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new AppError('VALIDATION_FAILED', 'The request body must be a JSON object.', { issues: [{ path: '(body)', message: 'must be a JSON object' }] });
    }
    Object.assign(req, { body: parsed });
  }
  ctx.req.headers['content-type'] = 'application/json';
  return next();
}

/** `/api/v1/…` as the router matches it: whatever the letters' case. */
const UNDER_PREFIX = /^\/api\/v1(?=\/)/i;

/** A route pattern as the router writes it: `/api/v1/auth/sessions/:id`, for the metrics' `route` label. */
const routerPattern = (path: string) => `${API_PREFIX}${path.replace(/\{(\w+)\}/g, ':$1')}`;

/**
 * Mounts the REST routes on `router`, and returns a middleware that answers the requests it
 * finds a REST route for before the router sees them: the router tries every route of the
 * site in turn (pages, docs, webhooks), which cost /me about a tenth of its throughput
 * (issue 19's profile). It answers exactly as the router's route would (the same body reader
 * and handler, the same `route` label); anything else, it hands on to the router.
 *
 * With FAST_PATHS=off (gateway/src/fast-paths/), the routes are answered by trpc-to-openapi's
 * own handler, behind the router alone; the middleware only hands on.
 */
export function mountRest(router: Router, deps: Deps): (ctx: KoaContext, next: Next) => Promise<void> {
  const fast = deps.config.fastPaths ? createOpenApiHandler({ router: appRouter, logger: deps.logger }) : undefined;
  const handler = fast ?? createStockOpenApiHandler({ router: appRouter, logger: deps.logger });

  const contextOf = (ctx: KoaContext) => () => procedureContextOf(deps, ctx);
  const call = async (ctx: KoaContext) => {
    ctx.req.url = ctx.req.url!.slice(API_PREFIX.length);
    // trpc-to-openapi answers HEAD with a bare 204; as the GET it answers like it (Node drops the body).
    if (ctx.req.method === 'HEAD') ctx.req.method = 'GET';
    ctx.respond = false;
    await handler(ctx.req, ctx.res, contextOf(ctx));
  };
  for (const { method, path } of restRoutes()) router[method](routerPattern(path), readJsonBody, call);
  if (!fast) return (_ctx, next) => next();

  const routerPaths = new Map<string, string>();
  return async (ctx, next) => {
    // HEAD is left to the router: it answers it as the GET of the same route.
    const route = UNDER_PREFIX.test(ctx.path) && ctx.method !== 'HEAD' ? fast.find(ctx.method, ctx.path.slice(API_PREFIX.length)) : undefined;
    if (!route) return next();
    let routerPath = routerPaths.get(route.pattern);
    if (!routerPath) routerPaths.set(route.pattern, (routerPath = routerPattern(route.pattern)));
    (ctx as { routerPath?: string }).routerPath = routerPath;
    await readJsonBody(ctx, async () => {
      ctx.req.url = ctx.req.url!.slice(API_PREFIX.length);
      ctx.respond = false;
      await fast.answer(ctx.req, ctx.res, route, contextOf(ctx));
    });
  };
}
