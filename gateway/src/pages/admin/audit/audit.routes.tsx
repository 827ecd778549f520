import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { AUDIT_EVENTS } from '../../../../../server/src/index.ts';
import { queryText, type PageKit } from '../../kit/kit.tsx';
import { filterErrors, type Console } from '../console/console.tsx';
import { AuditPage, type AuditFilter } from './audit.view.tsx';

const given = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

const FILTER_LABELS = { account_id: 'Account id', since: 'From', until: 'Before' };

function filterOf(ctx: KoaContext): AuditFilter {
  return { account_id: given(queryText(ctx, 'account_id')), type: given(queryText(ctx, 'type')), since: given(queryText(ctx, 'since')), until: given(queryText(ctx, 'until')) };
}

/**
 * GET /admin/audit: the activity log a page at a time, through the export's procedure (each
 * first page is recorded as an export, as reading the log is an admin action). The export
 * filters by account and time; the type is picked out of the page shown.
 */
export function mountAuditPage(router: Router, kit: PageKit, consolePages: Console): void {
  consolePages.page(router, '/admin/audit', async (ctx, operator) => {
    const filter = filterOf(ctx);
    if (filter.type && !(AUDIT_EVENTS as readonly string[]).includes(filter.type)) {
      // The type is this page's filter, not the procedure's: its refusal is said here, as the procedure says its own.
      const errors = { type: 'Type is not an event type of the log.' };
      return kit.send(ctx, 400, <AuditPage operator={operator} filter={filter} page={{ success: true, items: [], next_cursor: null }} paged={false} errors={errors} />);
    }
    const cursor = queryText(ctx, 'cursor');
    try {
      const page = await kit.call(ctx).admin.auditExport({ account_id: filter.account_id, since: filter.since, until: filter.until, cursor });
      kit.send(ctx, 200, <AuditPage operator={operator} filter={filter} page={page} paged={cursor !== undefined} />);
    } catch (error) {
      const errors = filterErrors(error, FILTER_LABELS);
      if (!errors) throw error;
      kit.send(ctx, 400, <AuditPage operator={operator} filter={filter} page={{ success: true, items: [], next_cursor: null }} paged={false} errors={errors} />);
    }
  });
}
