import type Router from '@koa/router';
import type { PageKit } from '../kit/kit.tsx';
import { mountAccountsPages } from './accounts/accounts.routes.tsx';
import { mountAuditPage } from './audit/audit.routes.tsx';
import { createConsole } from './console/console.tsx';
import { mountEventsPages } from './events/events.routes.tsx';
import { mountInboxPages } from './inbox/inbox.routes.tsx';
import { mountOverviewPage } from './overview/overview.routes.tsx';

/**
 * The operator's console under /admin (docs/API.md, Pages): for admins, on the session cookie,
 * each page calling the admin procedures as any client does. Every action is a POST form
 * checked for its origin and CSRF token by the page kit, and asks for a code of the admin's
 * second factor once the session's step-up is over (console/console.tsx).
 */
export function mountAdminPages(router: Router, kit: PageKit): void {
  const consolePages = createConsole(router, kit);
  mountOverviewPage(router, kit, consolePages);
  mountAccountsPages(router, kit, consolePages);
  mountInboxPages(router, kit, consolePages);
  mountEventsPages(router, kit, consolePages);
  mountAuditPage(router, kit, consolePages);
}
