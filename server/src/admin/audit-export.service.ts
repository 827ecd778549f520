import type { Deps } from '../deps.ts';
import { AppError } from '../errors/errors.ts';
import type { SealedPlace } from '../lib/crypto.ts';
import { AUDIT_PAGE_SIZE, auditEventPages, recordEventReturningId, type AuditLine, type EventFilter } from '../modules/activity/index.ts';
import type { AuditExportInput, AuditFilterInput } from './admin.schemas.ts';
import type { Actor } from '../lib/request.ts';

// The activity export for auditors (docs/API.md, Operator API): every account's events,
// oldest first. Reading the log is itself an admin action, recorded in the actor's log once
// per export; a page of it is read only under that record.

/** The filter as the export's record and its cursors keep it: each field normalised, null when not given. */
type FilterRecord = { since: string | null; until: string | null; account_id: number | null };

const recordOf = (input: AuditFilterInput): FilterRecord => ({
  since: input.since ? new Date(input.since).toISOString() : null,
  until: input.until ? new Date(input.until).toISOString() : null,
  account_id: input.account_id ?? null,
});

const filterOf = (record: FilterRecord): EventFilter => ({
  since: record.since ? new Date(record.since) : undefined,
  until: record.until ? new Date(record.until) : undefined,
  accountId: record.account_id ?? undefined,
});

/** One record per export, with its filter (as given), written before the first event is read; its id. */
function recordExport(deps: Deps, actor: Actor, input: AuditFilterInput): Promise<string> {
  const filter = { since: input.since ?? null, until: input.until ?? null, account_id: input.account_id ?? null };
  return recordEventReturningId(deps.db, deps.clock, 'admin.audit_exported', { accountId: actor.accountId }, actor.request, { filter });
}

/**
 * The whole export as a stream of pages, read one keyset statement at a time as the consumer
 * asks for them (the CLI writes each to stdout before the next is read).
 */
export async function exportAuditEvents(deps: Deps, actor: Actor, input: AuditFilterInput): Promise<AsyncGenerator<AuditLine[]>> {
  await recordExport(deps, actor, input);
  return auditEventPages(deps.db, filterOf(recordOf(input)));
}

/**
 * Where the next page of an export starts, sealed so that only this service makes one: the
 * export's record, its filter, the last event read, and when it was issued. It is bound to
 * the admin it was given to, so another cannot read on under someone else's record.
 */
type Cursor = { export: string; filter: FilterRecord; after: string; issued: number };

/** Long enough for a slow reader between two pages; an abandoned cursor does not open the log for good. */
const CURSOR_TTL_MS = 60 * 60 * 1000;

const cursorPlace = (actor: Actor): SealedPlace => ({ column: 'audit_export_cursor', row: actor.accountId ?? 'cli' });

const badCursor = (message: string) => new AppError('VALIDATION_FAILED', undefined, { issues: [{ path: 'cursor', message }] });

function openCursor(deps: Deps, actor: Actor, sealed: string, filter: FilterRecord): Cursor {
  let cursor: Cursor;
  try {
    cursor = JSON.parse(deps.secretBox.open(sealed, cursorPlace(actor))) as Cursor;
  } catch {
    throw badCursor('is not a next_cursor this export gave out');
  }
  if (JSON.stringify(cursor.filter) !== JSON.stringify(filter)) throw badCursor('belongs to an export with other filters: give the same since, until and account_id');
  if (deps.clock.now().getTime() - cursor.issued > CURSOR_TTL_MS) throw badCursor('has expired: start the export again, without a cursor');
  return cursor;
}

/**
 * `admin.auditExport`: one page of the export, for clients that cannot take a stream (the
 * typed client batches, and a batch answers only once every call in it is done). The REST
 * route streams by following `next_cursor` page after page through this same procedure.
 * The export is recorded when its first page (no cursor) is read; each later page needs the
 * cursor the one before gave out, which names that record, so a long export is one line in
 * the actor's log and no page is read without one.
 */
export async function auditExportPage(deps: Deps, actor: Actor, input: AuditExportInput) {
  const filter = recordOf(input);
  const position = input.cursor === undefined ? { export: await recordExport(deps, actor, input), after: '0' } : openCursor(deps, actor, input.cursor, filter);
  const pages = auditEventPages(deps.db, filterOf(filter), position.after);
  const items = (await pages.next()).value || [];
  await pages.return(undefined);
  const next: Cursor | null = items.length === AUDIT_PAGE_SIZE ? { export: position.export, filter, after: items[items.length - 1].id, issued: deps.clock.now().getTime() } : null;
  return { success: true as const, items, next_cursor: next && deps.secretBox.seal(JSON.stringify(next), cursorPlace(actor)) };
}
