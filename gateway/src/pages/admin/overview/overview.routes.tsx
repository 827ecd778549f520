import type Router from '@koa/router';
import type { PageKit } from '../../kit/kit.tsx';
import type { Console } from '../console/console.tsx';
import { OverviewPage } from './overview.view.tsx';

/** GET /admin: accounts, sign-ins per hour, the inbox, events out and the latest admin changes. */
export function mountOverviewPage(router: Router, kit: PageKit, consolePages: Console): void {
  consolePages.page(router, '/admin', async (ctx, operator) => {
    const overview = await kit.call(ctx).admin.overview();
    kit.send(ctx, 200, <OverviewPage operator={operator} overview={overview} />);
  });
}
