import { createServer, type Server } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import type { Deps } from '../../server/src/index.ts';
import { mountHealth } from './routes/health.ts';

/**
 * A worker has no gateway, yet a container runtime needs something to probe: with
 * HEALTH_PORT set, a worker-only process answers GET /healthz and /readyz there (the same
 * routes as the gateway's) and nothing else.
 */
export async function startWorkerHealth(deps: Deps, port: number, isDraining: () => boolean): Promise<Server> {
  const app = new Koa();
  const router = new Router();
  mountHealth(router, deps, isDraining);
  app.use(router.routes());
  const server = createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, deps.config.host, () => resolve());
  });
  deps.logger.info({ port }, 'worker health endpoint listening');
  return server;
}
