import type Router from '@koa/router';
import { errorBody, migrationsApplied, type Deps } from '../../../server/src/index.ts';

export function mountHealth(router: Router, deps: Deps, isDraining: () => boolean): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const ready = !isDraining() && (await migrationsApplied(deps.db).catch(() => false));
    ctx.status = ready ? 200 : 503;
    ctx.body = ready ? { status: 'ready' } : errorBody('SERVICE_UNAVAILABLE');
  });
}
