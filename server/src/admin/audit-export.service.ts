import type { Deps } from '../deps.ts';
import { AUDIT_PAGE_SIZE, auditEventPages, recordEvent, type AuditLine, type EventFilter } from '../modules/activity/index.ts';
import type { AuditExportInput, AuditFilterInput } from './admin.schemas.ts';
import type { Actor } from './actor.ts';

// The activity export for auditors (docs/API.md, Operator API): every account's events,
// oldest first. Reading the log is itself an admin action, recorded in the actor's log.

const filterOf = (input: AuditFilterInput): EventFilter => ({
  since: input.since ? new Date(input.since) : undefined,
  until: input.until ? new Date(input.until) : undefined,
  accountId: input.account_id,
});

/** One record per export, with its filter, written before the first event is read. */
function recordExport(deps: Deps, actor: Actor, input: AuditFilterInput) {
  const filter = { since: input.since ?? null, until: input.until ?? null, account_id: input.account_id ?? null };
  return recordEvent(deps.db, deps.clock, 'admin.audit_exported', { accountId: actor.accountId }, actor.request, { filter });
}

/**
 * The whole export as a stream of pages, read one keyset statement at a time as the consumer
 * asks for them (the CLI writes each to stdout before the next is read).
 */
export async function exportAuditEvents(deps: Deps, actor: Actor, input: AuditFilterInput): Promise<AsyncGenerator<AuditLine[]>> {
  await recordExport(deps, actor, input);
  return auditEventPages(deps.db, filterOf(input));
}

/**
 * `admin.auditExport`: one page of the export, for clients that cannot take a stream (the
 * typed client batches, and a batch answers only once every call in it is done). The REST
 * route streams by following `next_cursor` page after page through this same procedure.
 * The export is recorded when its first page (no cursor) is read, not once per page, so a
 * long export is one line in the actor's log.
 */
export async function auditExportPage(deps: Deps, actor: Actor, input: AuditExportInput) {
  if (input.cursor === undefined) await recordExport(deps, actor, input);
  const pages = auditEventPages(deps.db, filterOf(input), input.cursor);
  const items = (await pages.next()).value || [];
  await pages.return(undefined);
  return { success: true as const, items, next_cursor: items.length === AUDIT_PAGE_SIZE ? items[items.length - 1].id : null };
}
