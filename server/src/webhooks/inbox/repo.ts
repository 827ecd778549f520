import type { Queryable } from '../../lib/db.ts';
import type { InboxEntry, Outcome, ProviderName } from '../provider.ts';
import { INBOX_STATES, type InboxRecord, type InboxState } from './model.ts';

// Every statement on webhook_inbox (model.ts), in one place. Named ones are prepared once per
// connection. A statement that picks rows by `id = ANY(…)` is left unnamed, to be planned at
// each call: PostgreSQL soon keeps one generic plan for a named one, and a plan made while
// the table was still empty (a new deployment's first burst) scans the whole table for its
// ids until the next ANALYZE, where a plan made with the values looks them up by key.

/** A verified delivery, ready to be kept. `scope` is the site key or channel id ('' if none). */
export type InboxDelivery = { provider: ProviderName; scope: string; externalId: string; payload: Buffer };

// The payloads travel as one bytea parameter, each cut from it by its start and length:
// node-postgres sends a Buffer parameter as raw bytes, where an array of them would be an
// array literal of hex text, twice the bytes to write, encoded here and decoded by the server.
const INSERT = {
  name: 'webhook_inbox_insert',
  text: `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at)
         SELECT id, provider, scope, external_id, substr($5::bytea, start, length), $8::timestamptz
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $6::int[], $7::int[])
           AS d(id, provider, scope, external_id, start, length)
         ON CONFLICT (provider, scope, external_id) DO NOTHING
         RETURNING id`,
};

/**
 * Keeps a group of deliveries with one statement, committed on its own: one round trip for
 * the whole group, which is what lets ingest keep up with a provider's bursts. A delivery
 * already kept is skipped, which is what makes a provider's retry a no-op. Returns the new
 * rows' ids.
 */
export async function insertDeliveries(db: Queryable, deliveries: Array<InboxDelivery & { id: string }>, receivedAt: Date): Promise<Set<string>> {
  const starts: number[] = [];
  let start = 1; // substr counts from 1
  for (const d of deliveries) {
    starts.push(start);
    start += d.payload.length;
  }
  const rows = await db.query<{ id: string }>(INSERT, [
    deliveries.map((d) => d.id),
    deliveries.map((d) => d.provider),
    deliveries.map((d) => d.scope),
    deliveries.map((d) => d.externalId),
    Buffer.concat(deliveries.map((d) => d.payload)),
    starts,
    deliveries.map((d) => d.payload.length),
    receivedAt,
  ]);
  return new Set(rows.map((row) => row.id));
}

const MARK_ENQUEUED = 'UPDATE webhook_inbox SET enqueued_at = $2 WHERE id = ANY($1::uuid[])';

/** Those of `ids` still waiting without a job, locked for this transaction. */
export async function lockUndispatchedAmong(tx: Queryable, ids: string[]): Promise<string[]> {
  const rows = await tx.query<{ id: string }>(`SELECT id FROM webhook_inbox WHERE id = ANY($1::uuid[]) AND state = 'received' AND enqueued_at IS NULL ORDER BY id FOR UPDATE`, [ids]);
  return rows.map((row) => row.id);
}

export async function markEnqueued(tx: Queryable, ids: string[], now: Date): Promise<void> {
  await tx.query(MARK_ENQUEUED, [ids, now]);
}

// A replayed row keeps its old received_at: it counts from when it was enqueued again.
const STALE = {
  name: 'webhook_inbox_stale',
  text: `SELECT id FROM webhook_inbox WHERE state = 'received' AND coalesce(enqueued_at, received_at) < $1
         ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
};

/**
 * Rows still 'received' that arrived (or were replayed) before `cutoff`, oldest first, locked
 * for this transaction; rows a transaction is applying are skipped.
 */
export async function lockStale(tx: Queryable, cutoff: Date, limit: number): Promise<string[]> {
  return (await tx.query<{ id: string }>(STALE, [cutoff, limit])).map((row) => row.id);
}

// Within one group commit every row has the same received_at, and the rows lie in the table in
// the order of their unique key, not of their arrival: the id (UUID v7, made in the order the
// deliveries came; lib/uuid7.ts) is what tells their order.
const WAITING = {
  name: 'webhook_inbox_waiting',
  text: `SELECT id, provider, scope FROM webhook_inbox WHERE state = 'received' AND enqueued_at IS NULL ORDER BY received_at, id LIMIT $1`,
};

/** An inbox row's id, provider and scope: what a look returns, and what tells a row's stream (inbox/dispatcher.ts). */
export type RowScope = Pick<InboxEntry, 'id' | 'provider' | 'scope'>;

/**
 * Up to `limit` of the oldest entries given no job, in the order they arrived, not locked:
 * the worker then locks them a chunk at a time (lockReceivedEntries, skipping what another
 * transaction holds). One look serves many chunks because each look walks the index from its
 * start, over the entries of rows applied since the last VACUUM (only VACUUM removes them):
 * 300,000 of them cost a look 1 to 9 ms, a few microseconds a row at a thousand rows a look.
 */
export async function waitingRows(db: Queryable, limit: number): Promise<RowScope[]> {
  return db.query<RowScope>(WAITING, [limit]);
}

/** The provider and scope of each of these rows that exists. */
export async function rowsAmong(db: Queryable, ids: string[]): Promise<RowScope[]> {
  return db.query<RowScope>('SELECT id, provider, scope FROM webhook_inbox WHERE id = ANY($1::uuid[])', [ids]);
}

const LOCK_ENTRIES = `SELECT id, provider, scope, payload, received_at FROM webhook_inbox
  WHERE id = ANY($1::uuid[]) AND state = 'received' ORDER BY id FOR UPDATE`;
const LOCK_FREE_ENTRIES = `${LOCK_ENTRIES} SKIP LOCKED`;

type EntryRow = Pick<InboxRecord, 'id' | 'provider' | 'scope' | 'payload' | 'received_at'>;

/**
 * Those of the entries still waiting to be applied, locked until the transaction ends, in
 * the order of `ids`. One statement for a worker's whole chunk; the rows are locked in id
 * order, so two transactions locking overlapping chunks (a replay beside a retry) wait for
 * each other instead of deadlocking. A row that another transaction applied while this one
 * waited for its lock is rechecked and left out. With `skipLocked`, a row another
 * transaction holds is left out at once (a worker's first attempts: that one has it).
 */
export async function lockReceivedEntries(tx: Queryable, ids: string[], options: { skipLocked?: boolean } = {}): Promise<InboxEntry[]> {
  const rows = new Map((await tx.query<EntryRow>(options.skipLocked ? LOCK_FREE_ENTRIES : LOCK_ENTRIES, [ids])).map((row) => [row.id, row]));
  return ids.flatMap((id) => {
    const row = rows.get(id);
    return row ? [{ id: row.id, provider: row.provider, scope: row.scope, payload: row.payload, receivedAt: row.received_at }] : [];
  });
}

const SET_OUTCOMES = `UPDATE webhook_inbox AS w SET state = o.state, reason = o.reason, attempts = w.attempts + 1, processed_at = $4
  FROM unnest($1::uuid[], $2::text[], $3::text[]) AS o(id, state, reason) WHERE w.id = o.id`;

/** Each applied entry's outcome, in one statement. last_error is left as it was: after a success it still tells why earlier attempts failed. */
export async function setOutcomes(tx: Queryable, outcomes: Array<{ id: string; outcome: Outcome }>, now: Date): Promise<void> {
  if (!outcomes.length) return;
  await tx.query(SET_OUTCOMES, [
    outcomes.map((o) => o.id),
    outcomes.map((o) => o.outcome.state),
    outcomes.map((o) => (o.outcome.state === 'ignored' ? o.outcome.reason : null)),
    now,
  ]);
}

/** Outside the failed transaction, so the count and the error survive its rollback. */
export async function recordFailure(db: Queryable, id: string, error: unknown): Promise<void> {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  await db.query(`UPDATE webhook_inbox SET attempts = attempts + 1, last_error = $2 WHERE id = $1 AND state = 'received'`, [id, message.slice(0, 1000)]);
}

/** Retries are used up: the entry is kept, visibly dead. Returns it when it was still waiting. */
export async function markDead(db: Queryable, id: string, now: Date): Promise<{ provider: string; attempts: number } | undefined> {
  const [row] = await db.query<{ provider: string; attempts: number }>(
    `UPDATE webhook_inbox SET state = 'dead', processed_at = $2 WHERE id = $1 AND state = 'received' RETURNING provider, attempts`,
    [id, now],
  );
  return row;
}

// ------------------------------------------------------------ operators (docs/API.md, Operator API)

export { INBOX_STATES, type InboxState };

export type InboxFilter = { provider?: ProviderName; state?: InboxState; since?: Date; until?: Date };

export type InboxRow = Pick<InboxRecord, 'id' | 'provider' | 'scope' | 'external_id' | 'state' | 'received_at' | 'processed_at' | 'attempts' | 'last_error' | 'reason'>;

const ROW_COLUMNS = 'id, provider, scope, external_id, state, received_at, processed_at, attempts, last_error, reason';

/** The filter as SQL conditions on its own parameters, only for what is set, so each combination finds its index. */
function whereOf(filter: InboxFilter, values: unknown[]): string[] {
  const conditions: string[] = [];
  const add = (sql: (n: string) => string, value: unknown) => {
    values.push(value);
    conditions.push(sql(`$${values.length}`));
  };
  if (filter.provider) add((n) => `provider = ${n}`, filter.provider);
  if (filter.state) add((n) => `state = ${n}`, filter.state);
  if (filter.since) add((n) => `received_at >= ${n}`, filter.since);
  if (filter.until) add((n) => `received_at < ${n}`, filter.until);
  return conditions;
}

/** Rows per provider and state, with the oldest still waiting: one scan of the small indexes. */
export async function countByProviderAndState(db: Queryable): Promise<Array<{ provider: ProviderName; state: InboxState; count: number; oldest_received: Date | null }>> {
  return db.query(
    `SELECT provider, state, count(*)::int AS count, min(received_at) FILTER (WHERE state = 'received') AS oldest_received
     FROM webhook_inbox GROUP BY provider, state`,
  );
}

/**
 * A page of deliveries, newest first, after the (received_at, id) of the previous page's last
 * row: keyset paging, so page 1,000 costs what page 1 does.
 */
export async function listDeliveries(db: Queryable, filter: InboxFilter, after: { receivedAt: Date; id: string } | undefined, limit: number): Promise<InboxRow[]> {
  const values: unknown[] = [];
  const conditions = whereOf(filter, values);
  if (after) {
    values.push(after.receivedAt, after.id);
    conditions.push(`(received_at, id) < ($${values.length - 1}, $${values.length})`);
  }
  values.push(limit);
  return db.query(
    `SELECT ${ROW_COLUMNS} FROM webhook_inbox ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''}
     ORDER BY received_at DESC, id DESC LIMIT $${values.length}`,
    values,
  );
}

export async function findDelivery(db: Queryable, id: string): Promise<(InboxRow & { payload: Buffer }) | undefined> {
  const [row] = await db.query<InboxRow & { payload: Buffer }>(`SELECT ${ROW_COLUMNS}, payload FROM webhook_inbox WHERE id = $1`, [id]);
  return row;
}

/**
 * Puts a settled delivery back to 'received' for a replay, marked as enqueued (the caller
 * queues its job in the same transaction). Of two replays at once, the second waits for the
 * first's row lock, then finds it 'received' and does nothing: the delivery is applied once.
 */
export async function reopenDelivery(tx: Queryable, id: string, now: Date): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE webhook_inbox SET state = 'received', reason = NULL, processed_at = NULL, enqueued_at = $2
     WHERE id = $1 AND state IN ('processed', 'ignored', 'dead') RETURNING id`,
    [id, now],
  );
  return rows.length > 0;
}

/** Where a bulk replay has got to: the last delivery it took, in (received_at, id) order. */
export type ReplayPosition = { receivedAt: Date; id: string };

/**
 * The same for up to `limit` deliveries in `state` matching the filter, after `after`, in
 * (received_at, id) order; rows others hold are skipped. Returns them and where the next
 * batch starts: a delivery replayed and settled again (ignored once more) is not taken twice.
 */
export async function reopenDeliveries(
  tx: Queryable,
  filter: InboxFilter & { state: 'dead' | 'ignored' },
  now: Date,
  limit: number,
  after?: ReplayPosition,
): Promise<{ ids: string[]; last: ReplayPosition | undefined }> {
  const values: unknown[] = [];
  const conditions = whereOf(filter, values);
  if (after) {
    values.push(after.receivedAt, after.id);
    conditions.push(`(received_at, id) > ($${values.length - 1}, $${values.length})`);
  }
  values.push(now, limit);
  const rows = await tx.query<{ id: string; received_at: Date }>(
    `UPDATE webhook_inbox SET state = 'received', reason = NULL, processed_at = NULL, enqueued_at = $${values.length - 1}
     WHERE id IN (SELECT id FROM webhook_inbox WHERE ${conditions.join(' AND ')} ORDER BY received_at, id LIMIT $${values.length} FOR UPDATE SKIP LOCKED)
     RETURNING id, received_at`,
    values,
  );
  const ordered = rows.sort((a, b) => a.received_at.getTime() - b.received_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const last = ordered.at(-1);
  return { ids: ordered.map((row) => row.id), last: last && { receivedAt: last.received_at, id: last.id } };
}

/**
 * Deletes up to `limit` deliveries in one of `states` received before `before`; returns how
 * many. The state is checked again on the row as the delete locks it: a replay that put it
 * back to 'received' meanwhile keeps it.
 */
export async function deleteDeliveries(db: Queryable, filter: { states: InboxState[]; before: Date; provider?: ProviderName }, limit: number): Promise<number> {
  const rows = await db.query(
    `DELETE FROM webhook_inbox WHERE id IN (
       SELECT id FROM webhook_inbox WHERE state = ANY($1) AND received_at < $2 AND ($3::text IS NULL OR provider = $3) LIMIT $4
     ) AND state = ANY($1) RETURNING id`,
    [filter.states, filter.before, filter.provider ?? null, limit],
  );
  return rows.length;
}
