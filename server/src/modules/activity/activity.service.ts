import type { Actor, RequestInfo } from '../../lib/request.ts';
import type { Queryable } from '../../lib/db.ts';
import type { Clock } from '../../lib/clock.ts';
import { inBatches } from '../../lib/batches.ts';
import type { AuditEventRecord } from './activity.model.ts';
import { deleteEventsBefore, eventsAfter, insertEvent, insertEventReturningId, latestEvents, type EventFilter, type NewEvent } from './activity.repo.ts';
import type { AuditEvent, AuditLine } from './activity.schemas.ts';

/** What is kept of a request's user agent: enough to recognise a browser, bounded. */
export const userAgentOf = (request: RequestInfo) => request.userAgent?.slice(0, 512) ?? null;

/**
 * One line of the activity log, written with the caller's query runner: inside the
 * transaction of the change it records, so the change and its record commit together.
 */
export async function recordEvent(
  db: Queryable,
  clock: Clock,
  event: AuditEvent,
  who: { accountId: number | null },
  request: RequestInfo,
  data?: Record<string, unknown>,
): Promise<void> {
  await insertEvent(db, who, eventOf(clock, event, request, data));
}

/** An operator's action (a read too): the acting admin's line, or the CLI's without an account. */
export function recordAction(db: Queryable, clock: Clock, actor: Actor, event: AuditEvent, data: Record<string, unknown>): Promise<void> {
  return recordEvent(db, clock, event, { accountId: actor.accountId }, actor.request, data);
}

/** recordEvent's line, of an account by id, for a caller that names it later (an export's pages name their export). */
export function recordEventReturningId(
  db: Queryable,
  clock: Clock,
  event: AuditEvent,
  who: { accountId: number | null },
  request: RequestInfo,
  data?: Record<string, unknown>,
): Promise<string> {
  return insertEventReturningId(db, who.accountId, eventOf(clock, event, request, data));
}

const eventOf = (clock: Clock, event: AuditEvent, request: RequestInfo, data: Record<string, unknown> | undefined): NewEvent => ({
  event,
  at: clock.now(),
  ip: request.ip || null,
  user_agent: userAgentOf(request),
  data: data ?? null,
});

const ACTIVITY_LIMIT = 100;

/** The account's newest activity first (its owner's list, or an administrator's look at it). */
export async function listActivity(db: Queryable, accountId: number, limit = ACTIVITY_LIMIT) {
  const rows = await latestEvents(db, accountId, limit);
  return { success: true as const, items: rows.map((row) => ({ event: row.event, at: row.at.toISOString(), ip: row.ip, user_agent: row.user_agent })) };
}

/** Rows per statement of an export: small enough to hold in memory, large enough to keep round trips few. */
export const AUDIT_PAGE_SIZE = 1000;

const toAuditLine = (row: AuditEventRecord): AuditLine => ({
  id: row.id,
  at: row.at.toISOString(),
  account_id: row.account_id,
  event: row.event,
  ip: row.ip,
  user_agent: row.user_agent,
  data: row.data,
});

/**
 * The events matching `filter`, oldest first (by id), after the event `after` (from the
 * start when omitted), a page of up to `pageSize` at a time. Each page is its own keyset
 * statement and nothing is held open between them, so a reader that stops early (a client
 * gone) leaves nothing behind; events recorded while the export runs are included if they
 * match.
 */
export async function* auditEventPages(db: Queryable, filter: EventFilter, after = '0', pageSize = AUDIT_PAGE_SIZE): AsyncGenerator<AuditLine[]> {
  let last = after;
  for (;;) {
    const rows = await eventsAfter(db, filter, last, pageSize);
    if (rows.length) yield rows.map(toAuditLine);
    if (rows.length < pageSize) return;
    last = rows[rows.length - 1].id;
  }
}

/**
 * Retention: deletes events older than `before`, a thousand at a time so no statement holds
 * its locks for long. Returns how many went.
 */
export async function purgeAuditEvents(db: Queryable, before: Date, batch = 1000): Promise<number> {
  return inBatches(() => deleteEventsBefore(db, before, batch), batch);
}
