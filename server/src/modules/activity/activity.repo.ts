import type { Queryable } from '../../lib/db.ts';
import type { AuditEventRecord } from './activity.model.ts';

// Every statement on audit_events (activity.model.ts).

// Every sign-in writes one: a name, so each connection prepares it once.
const INSERT_SQL = 'INSERT INTO audit_events (account_id, event, at, ip, user_agent, data) VALUES ($1::int, $2, $3, $4, $5, $6)';
const INSERT_BY_ID = { name: 'audit_insert_by_id', text: INSERT_SQL };
const INSERT_BY_ID_RETURNING = `${INSERT_SQL} RETURNING id`;

export type NewEvent = Pick<AuditEventRecord, 'event' | 'at' | 'ip' | 'user_agent' | 'data'>;

/** One event of an account by id, or of no account (a failed sign-in to an address no account has). */
export async function insertEvent(db: Queryable, who: { accountId: number | null }, event: NewEvent): Promise<void> {
  await db.query(INSERT_BY_ID, [who.accountId, event.event, event.at, event.ip, event.user_agent, event.data]);
}

/** One event of an account by id (or of no account), and the id the log gave it. */
export async function insertEventReturningId(db: Queryable, accountId: number | null, event: NewEvent): Promise<string> {
  const [row] = await db.query<{ id: string }>(INSERT_BY_ID_RETURNING, [accountId, event.event, event.at, event.ip, event.user_agent, event.data]);
  return String(row.id);
}

export type ActivityRow = Pick<AuditEventRecord, 'event' | 'at' | 'ip' | 'user_agent'>;

/** The account's newest events first. */
export function latestEvents(db: Queryable, accountId: number, limit: number): Promise<ActivityRow[]> {
  return db.query<ActivityRow>(`SELECT event, at, ip, user_agent FROM audit_events WHERE account_id = $1 ORDER BY at DESC, id DESC LIMIT ${limit}`, [accountId]);
}

export type HourlyCount = { hour: Date; event: string; count: number };

/**
 * How many events of these types happened in each UTC hour from `since` on (`hour` is the
 * hour's start), whatever the session's time zone. One range of the (event, at) index per
 * type, read from the index alone.
 */
export function eventCountsByHour(db: Queryable, events: readonly string[], since: Date): Promise<HourlyCount[]> {
  return db.query<HourlyCount>(
    `SELECT date_trunc('hour', at, 'UTC') AS hour, event, count(*)::int AS count
     FROM audit_events WHERE event = ANY($1::text[]) AND at >= $2 GROUP BY 1, 2`,
    [events, since],
  );
}

export type LatestEventRow = Pick<AuditEventRecord, 'id' | 'account_id' | 'event' | 'at' | 'data'>;

/**
 * The latest `limit` events of these types, newest first: the latest few of each type, read
 * from the (event, at) index, merged, so that the cost does not grow with the log.
 */
export function latestOfTypes(db: Queryable, events: readonly string[], limit: number): Promise<LatestEventRow[]> {
  return db.query<LatestEventRow>(
    `SELECT latest.id, latest.account_id, latest.event, latest.at, latest.data FROM unnest($1::text[]) AS types(event)
     CROSS JOIN LATERAL (
       SELECT a.id, a.account_id, a.event, a.at, a.data FROM audit_events a WHERE a.event = types.event ORDER BY a.at DESC, a.id DESC LIMIT $2
     ) AS latest
     ORDER BY latest.at DESC, latest.id DESC LIMIT $2`,
    [events, limit],
  );
}

/** Which events an export reads: `since` inclusive, `until` exclusive, one account or all. */
export type EventFilter = { since?: Date; until?: Date; accountId?: number };

/**
 * Up to `limit` events after the id `after`, by id: a keyset page, so each page is one short
 * statement on the primary key however far into the log it starts.
 */
export function eventsAfter(db: Queryable, filter: EventFilter, after: string, limit: number): Promise<AuditEventRecord[]> {
  return db.query<AuditEventRecord>(
    `SELECT id, account_id, event, at, ip, user_agent, data FROM audit_events
     WHERE id > $1::bigint AND ($2::timestamptz IS NULL OR at >= $2) AND ($3::timestamptz IS NULL OR at < $3) AND ($4::int IS NULL OR account_id = $4)
     ORDER BY id LIMIT ${limit}`,
    [after, filter.since ?? null, filter.until ?? null, filter.accountId ?? null],
  );
}

/** Deletes up to `batch` events older than `before`; returns how many went. */
export async function deleteEventsBefore(db: Queryable, before: Date, batch: number): Promise<number> {
  return (await db.query(`DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE at < $1 ORDER BY id LIMIT ${batch}) RETURNING id`, [before])).length;
}
