import type Router from '@koa/router';
import { AppError, connectMetricReadings, safeEqual, type Deps } from '../../../server/src/index.ts';
import { bearerToken } from '../procedure-context.ts';

/**
 * GET /metrics, Prometheus text, for whoever holds METRICS_TOKEN (docs/OPERATIONS.md, Metrics):
 * on the gateway, and on a worker-only process's WORKER_METRICS_PORT. Without a token
 * configured there is no such route: a 404 like any unknown path.
 */
export function mountMetrics(router: Router, deps: Deps): void {
  const token = deps.config.metricsToken;
  if (!token) return;
  const { metrics } = deps;
  connectMetricReadings(deps);

  router.get('/metrics', async (ctx) => {
    const presented = bearerToken(ctx.get('authorization')) ?? '';
    // Constant time, and the same 401 for a missing and a wrong token.
    if (!safeEqual(presented, token)) throw new AppError('UNAUTHORIZED');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
}
