import Router from '@koa/router';
import Koa from 'koa';
import type { Deps } from '../../server/src/deps.ts';
import { AppError } from '../../server/src/errors.ts';
import { errorHandler, requestContext } from './http.ts';
import { mountHealth } from './routes/health.ts';
import { mountPages } from './routes/pages.ts';
import { mountRest } from './routes/rest.ts';
import { mountTrpc } from './routes/trpc.ts';
import { mountWebhooks } from './routes/webhooks.ts';

export type Gateway = { app: Koa; startDraining(): void };

/**
 * The Koa app, without listening. No global body parser: REST reads JSON with its own cap,
 * tRPC reads its own bodies, and webhooks need the raw bytes.
 */
export function createGateway(deps: Deps): Gateway {
  let draining = false;
  const app = new Koa();
  if (deps.config.trustedProxies > 0) {
    // ctx.ip becomes the address the outermost trusted proxy saw, never a client's own claim.
    app.proxy = true;
    app.maxIpsCount = deps.config.trustedProxies;
  }
  const router = new Router();
  mountHealth(router, deps, () => draining);
  mountTrpc(router, deps);
  mountRest(router, deps);
  mountWebhooks(router, deps);
  mountPages(router, deps);

  app.use(requestContext(deps.logger));
  app.use(async (ctx, next) => {
    await next();
    // While draining, answers tell clients to reconnect elsewhere instead of reusing the socket.
    if (draining) ctx.set('Connection', 'close');
  });
  app.use(errorHandler());
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
  app.on('error', (error) => deps.logger.error({ err: error }, 'koa error'));
  return { app, startDraining: () => (draining = true) };
}
