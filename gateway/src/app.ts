import Router from '@koa/router';
import Koa from 'koa';
import { AppError, type Deps } from '../../server/src/index.ts';
import { createCors } from './cors.ts';
import { errorHandler, logKoaErrors, refuseControlCharacters, requestContext } from './http.ts';
import { describeRequest } from './procedure-context.ts';
import { mountAuditExport } from './routes/audit-export.ts';
import { mountApiDocs } from './routes/docs-page.ts';
import { mountHealth } from './routes/health.ts';
import { mountJwks } from './routes/jwks.ts';
import { mountMetrics } from './routes/metrics.ts';
import { mountPages } from './pages/index.ts';
import { mountRest } from './routes/rest.ts';
import { mountTrpc } from './routes/trpc.ts';
import { mountWebhooks } from './routes/webhooks.ts';

export type Gateway = {
  app: Koa;
  startDraining(): void;
  /**
   * Resolves once no request is being handled. Closing the server waits only for
   * connections: a handler whose client hung up keeps running after its socket is gone,
   * and the database must stay open until it has finished.
   */
  settled(): Promise<void>;
  /** Requests being handled now, the clients of some of them perhaps gone. */
  inFlight(): number;
};

// Whatever the letters' case: the router matches paths so, and /API/V1/auth/me is /me.
const API_PATH = /^\/(?:api\/v1|trpc)\//i;

/**
 * On every answer, `nosniff`, and over https `Strict-Transport-Security`: a browser that has
 * been here once never tries plain http again, where a session cookie could be caught. On
 * the API's, `no-store`: they carry tokens, keys and account data that no cache should keep.
 */
function responseHeaders(config: Deps['config']) {
  const always: Record<string, string> = { 'X-Content-Type-Options': 'nosniff' };
  if (config.publicUrl.startsWith('https:')) always['Strict-Transport-Security'] = 'max-age=31536000';
  return async (ctx: Koa.Context, next: Koa.Next) => {
    ctx.set(always);
    if (API_PATH.test(ctx.path)) ctx.set('Cache-Control', 'no-store');
    return next();
  };
}

/**
 * The Koa app, without listening. No global body parser: REST reads JSON with its own cap,
 * tRPC reads its own bodies, and webhooks need the raw bytes.
 */
export function createGateway(deps: Deps): Gateway {
  let draining = false;
  let inFlight = 0;
  const onSettled: Array<() => void> = [];
  deps.metrics.readRequestsInFlightFrom(() => inFlight);
  const app = new Koa();
  if (deps.config.trustedProxies > 0) {
    // ctx.ip becomes the address the outermost trusted proxy saw, never a client's own claim.
    app.proxy = true;
    app.maxIpsCount = deps.config.trustedProxies;
  }
  const router = new Router();
  mountHealth(router, deps, () => draining);
  mountJwks(router, deps);
  mountMetrics(router, deps);
  mountTrpc(router, deps);
  mountApiDocs(router, deps);
  const restRoutes = mountRest(router, deps);
  // REST too, but a stream: not one of trpc-to-openapi's JSON answers.
  mountAuditExport(router, deps);
  const webhookRoutes = mountWebhooks(router, deps);
  mountPages(router, deps);

  app.use(requestContext(deps));
  app.use(describeRequest(deps.config));
  // First, so that every answer has them, the error handler's and a refused request's too.
  app.use(responseHeaders(deps.config));
  app.use(async (ctx, next) => {
    inFlight++;
    try {
      await next();
    } finally {
      if (--inFlight === 0 && onSettled.length) for (const resolve of onSettled.splice(0)) resolve();
    }
    // While draining, answers tell clients to reconnect elsewhere instead of reusing the socket.
    if (draining) ctx.set('Connection', 'close');
  });
  app.use(errorHandler());
  // Inside the error handler, so its answers keep the CORS headers set on the way in.
  app.use(createCors(deps.config));
  app.use(refuseControlCharacters());
  app.use(restRoutes);
  app.use(webhookRoutes);
  app.use(router.routes());
  app.use(async (ctx) => {
    // Reached only when no route answered: a known path with another method is a 405.
    const match = router.match(ctx.path, ctx.method);
    if (match.path.length > 0 && !match.route) {
      const allowed = [...new Set(match.path.flatMap((layer) => layer.methods))].filter((m) => m !== 'HEAD');
      ctx.set('Allow', allowed.join(', '));
      throw new AppError('METHOD_NOT_ALLOWED');
    }
    throw new AppError('NOT_FOUND', `No route for ${ctx.method} ${ctx.path}.`);
  });
  logKoaErrors(app, deps.logger);
  return {
    app,
    startDraining: () => (draining = true),
    settled: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => onSettled.push(resolve))),
    inFlight: () => inFlight,
  };
}
