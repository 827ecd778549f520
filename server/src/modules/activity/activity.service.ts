import type { RequestInfo } from '../../trpc/context.ts';
import type { Queryable } from '../../lib/db.ts';
import type { Clock } from '../../lib/clock.ts';
import { inBatches } from '../../lib/batches.ts';
import { deleteEventsBefore, insertEvent, latestEvents } from './activity.repo.ts';
import type { AuditEvent } from './activity.schemas.ts';

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
  who: { accountId: number | null } | { email: string },
  request: RequestInfo,
  data?: Record<string, unknown>,
): Promise<void> {
  await insertEvent(db, who, { event, at: clock.now(), ip: request.ip || null, user_agent: userAgentOf(request), data: data ?? null });
}

const ACTIVITY_LIMIT = 100;

/** The account's newest activity first. */
export async function listActivity(db: Queryable, accountId: number) {
  const rows = await latestEvents(db, accountId, ACTIVITY_LIMIT);
  return { success: true as const, items: rows.map((row) => ({ event: row.event, at: row.at.toISOString(), ip: row.ip, user_agent: row.user_agent })) };
}

/**
 * Retention: deletes events older than `before`, a thousand at a time so no statement holds
 * its locks for long. Returns how many went.
 */
export async function purgeAuditEvents(db: Queryable, before: Date, batch = 1000): Promise<number> {
  return inBatches(() => deleteEventsBefore(db, before, batch), batch);
}
