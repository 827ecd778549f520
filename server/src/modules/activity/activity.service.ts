import type { RequestInfo } from '../../trpc/context.ts';
import type { Queryable } from '../../lib/db.ts';
import type { Clock } from '../../lib/clock.ts';
import { inBatches } from '../../lib/batches.ts';
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
  // By address for failed logins: the same statement whether or not an account has it, so
  // a known and an unknown address cost the same.
  const account = 'accountId' in who ? { sql: '$1::int', value: who.accountId } : { sql: '(SELECT id FROM accounts WHERE email = $1)', value: who.email };
  await db.query(
    `INSERT INTO audit_events (account_id, event, at, ip, user_agent, data) VALUES (${account.sql}, $2, $3, $4, $5, $6)`,
    [account.value, event, clock.now(), request.ip || null, userAgentOf(request), data ?? null],
  );
}

const ACTIVITY_LIMIT = 100;

type ActivityRow = { event: AuditEvent; at: Date; ip: string | null; user_agent: string | null };

/** The account's newest activity first. */
export async function listActivity(db: Queryable, accountId: number) {
  const rows = await db.query<ActivityRow>(
    `SELECT event, at, ip, user_agent FROM audit_events WHERE account_id = $1 ORDER BY at DESC, id DESC LIMIT ${ACTIVITY_LIMIT}`,
    [accountId],
  );
  return { success: true as const, items: rows.map((row) => ({ event: row.event, at: row.at.toISOString(), ip: row.ip, user_agent: row.user_agent })) };
}

/**
 * Retention: deletes events older than `before`, a thousand at a time so no statement holds
 * its locks for long. Returns how many went.
 */
export async function purgeAuditEvents(db: Queryable, before: Date, batch = 1000): Promise<number> {
  const step = async () =>
    (await db.query(`DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE at < $1 ORDER BY id LIMIT ${batch}) RETURNING id`, [before])).length;
  return inBatches(step, batch);
}
