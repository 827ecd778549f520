import type { Queryable } from '../../lib/db.ts';
import { sealedColumn } from '../../lib/sealed-column.ts';
import type { AttemptLogEntry, DeliveryState, EventDeliveryRecord, EventEndpointRecord } from './events.model.ts';

// Every statement on event_endpoints, events and event_deliveries (events.model.ts). The
// sender's statements keep a name, so each connection prepares them once.

// ------------------------------------------------------------------ endpoints

export type EndpointRow = Pick<EventEndpointRecord, 'id' | 'url' | 'description' | 'events' | 'enabled' | 'created_at'>;
const ENDPOINT_COLUMNS = 'id, url, description, events, enabled, created_at';

export async function insertEndpoint(tx: Queryable, endpoint: Pick<EventEndpointRecord, 'id' | 'url' | 'description' | 'events' | 'secret_sealed' | 'created_at'>): Promise<EndpointRow> {
  const [row] = await tx.query<EndpointRow>(
    `INSERT INTO event_endpoints (id, url, description, events, enabled, secret_sealed, created_at, updated_at)
     VALUES ($1, $2, $3, $4, true, $5, $6, $6) RETURNING ${ENDPOINT_COLUMNS}`,
    [endpoint.id, endpoint.url, endpoint.description, endpoint.events, endpoint.secret_sealed, endpoint.created_at],
  );
  return row;
}

export function endpointRows(db: Queryable): Promise<EndpointRow[]> {
  return db.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM event_endpoints ORDER BY created_at, id`);
}

/** The endpoint locked for a change in this transaction. */
export async function lockEndpoint(tx: Queryable, id: string): Promise<EndpointRow | undefined> {
  const [row] = await tx.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM event_endpoints WHERE id = $1 FOR UPDATE`, [id]);
  return row;
}

export type EndpointChange = { url?: string; description?: string | null; events?: string[] | null };

/** Writes the fields given (undefined: keep). */
export async function updateEndpointRow(tx: Queryable, id: string, change: EndpointChange, now: Date): Promise<EndpointRow> {
  const [row] = await tx.query<EndpointRow>(
    `UPDATE event_endpoints SET
       url = CASE WHEN $2 THEN $3 ELSE url END,
       description = CASE WHEN $4 THEN $5 ELSE description END,
       events = CASE WHEN $6 THEN $7::text[] ELSE events END,
       updated_at = $8
     WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
    [id, change.url !== undefined, change.url ?? null, change.description !== undefined, change.description ?? null, change.events !== undefined, change.events ?? null, now],
  );
  return row;
}

/**
 * Turns sending off or on. Off: what was still pending is kept as skipped, so nothing more is
 * sent until `retry-dead`. On: the run of failures starts over. Returns whether it changed.
 */
export async function setEndpointEnabled(tx: Queryable, id: string, enabled: boolean, now: Date): Promise<boolean> {
  const changed = await tx.query(
    `UPDATE event_endpoints SET enabled = $2, disabled_at = CASE WHEN $2 THEN NULL ELSE $3::timestamptz END, failing_since = NULL, updated_at = $3
     WHERE id = $1 AND enabled <> $2 RETURNING id`,
    [id, enabled, now],
  );
  if (changed.length && !enabled) {
    await tx.query(`UPDATE event_deliveries SET state = 'skipped', leased_until = NULL, finished_at = $2 WHERE endpoint_id = $1 AND state = 'pending'`, [id, now]);
  }
  return changed.length > 0;
}

/** A new secret; the one it replaces keeps signing until `previousUntil` (null: stops now). */
export async function replaceEndpointSecret(tx: Queryable, id: string, sealed: string, previous: { sealed: string; until: Date } | null, now: Date): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE event_endpoints SET secret_sealed = $2, previous_secret_sealed = $3, previous_secret_until = $4, updated_at = $5 WHERE id = $1 RETURNING id`,
    [id, sealed, previous?.sealed ?? null, previous?.until ?? null, now],
  );
  return rows.length > 0;
}

export async function endpointSecretRow(db: Queryable, id: string): Promise<Pick<EventEndpointRecord, 'secret_sealed'> | undefined> {
  const [row] = await db.query<Pick<EventEndpointRecord, 'secret_sealed'>>('SELECT secret_sealed FROM event_endpoints WHERE id = $1', [id]);
  return row;
}

/** Deletes the endpoint and its deliveries (by cascade); false for no such endpoint. */
export async function deleteEndpointRow(tx: Queryable, id: string): Promise<boolean> {
  return (await tx.query('DELETE FROM event_endpoints WHERE id = $1 RETURNING id', [id])).length > 0;
}

export const sealedEndpointSecrets = sealedColumn('event_endpoints.secret_sealed', {
  sample: 'SELECT id::text AS key, secret_sealed AS value FROM event_endpoints LIMIT 1',
  countNotLike: 'SELECT count(*) AS count FROM event_endpoints WHERE secret_sealed NOT LIKE $1',
  pageNotLike: 'SELECT id::text AS key, secret_sealed AS value FROM event_endpoints WHERE secret_sealed NOT LIKE $1 AND ($2::text IS NULL OR id::text > $2) ORDER BY id::text LIMIT $3',
  reseal: 'UPDATE event_endpoints SET secret_sealed = $2 WHERE id = $1::uuid AND secret_sealed = $3',
});

export const sealedPreviousEndpointSecrets = sealedColumn('event_endpoints.previous_secret_sealed', {
  sample: 'SELECT id::text AS key, previous_secret_sealed AS value FROM event_endpoints WHERE previous_secret_sealed IS NOT NULL LIMIT 1',
  countNotLike: 'SELECT count(*) AS count FROM event_endpoints WHERE previous_secret_sealed NOT LIKE $1',
  pageNotLike:
    'SELECT id::text AS key, previous_secret_sealed AS value FROM event_endpoints WHERE previous_secret_sealed NOT LIKE $1 AND ($2::text IS NULL OR id::text > $2) ORDER BY id::text LIMIT $3',
  reseal: 'UPDATE event_endpoints SET previous_secret_sealed = $2 WHERE id = $1::uuid AND previous_secret_sealed = $3',
});

// ------------------------------------------------------------------ the outbox

export type NewEvent = { id: string; type: string; accountId: number | null; body: string; at: Date };

/**
 * The name of the lock on an account's events: see insertEvents. A chunk of webhook effects
 * takes it up front (webhooks/inbox/processor.ts), so it is the same lock by name.
 */
export const orderingLockName = (accountId: number) => `events:${accountId}`;

/** Whether an enabled endpoint wants events of `type`: only then does an event take the ordering lock. */
export async function enabledEndpointWants(db: Queryable, type: string): Promise<boolean> {
  const [row] = await db.query<{ wanted: boolean }>(
    { name: 'event_endpoints_want', text: 'SELECT EXISTS (SELECT 1 FROM event_endpoints WHERE enabled AND (events IS NULL OR $1 = ANY (events))) AS wanted' },
    [type],
  );
  return row.wanted;
}

/**
 * The events and their deliveries, one per event and endpoint that wants its type (skipped at
 * once where the endpoint is disabled), in one statement of the caller's transaction, in the
 * order given. For an account's event that an enabled endpoint wants, it first takes a lock on
 * the account's events, held to the commit: the deliveries of one account get their `seq` in
 * the order their transactions commit, so the sender, which goes by seq, never sees a later
 * one before an earlier one that has yet to commit. Several accounts' locks are taken in the
 * order of their names, as lockNames takes them (lib/advisory-locks.ts). An event no endpoint
 * will be sent has no pending delivery to order, and takes no lock: a site's payments, say,
 * are applied in parallel lanes until the platform subscribes to `payment.updated`.
 */
export async function insertEvents(tx: Queryable, events: NewEvent[]): Promise<void> {
  if (!events.length) return;
  await tx.query(
    {
      name: 'events_insert',
      text: `WITH input AS (
               SELECT * FROM unnest($1::text[], $2::text[], $3::integer[], $4::text[], $5::timestamptz[], $6::text[])
                 WITH ORDINALITY AS i(id, type, account_id, body, created_at, lock_name, ord)
             ), wanting AS (
               SELECT id, enabled, events FROM event_endpoints
             ), locked AS (
               SELECT count(*) FROM (
                 SELECT pg_advisory_xact_lock(hashtextextended(n.name, 0)) FROM (
                   SELECT DISTINCT i.lock_name COLLATE "C" AS name FROM input i
                   WHERE i.lock_name IS NOT NULL AND EXISTS (SELECT 1 FROM wanting w WHERE w.enabled AND (w.events IS NULL OR i.type = ANY (w.events)))
                   ORDER BY name
                 ) n
               ) taken
             ), event AS (
               INSERT INTO events (id, type, account_id, body, created_at)
               SELECT i.id, i.type, i.account_id, i.body, i.created_at FROM input i, locked ORDER BY i.ord RETURNING id
             )
             INSERT INTO event_deliveries (id, endpoint_id, event_id, account_id, type, state, next_attempt_at, created_at, finished_at)
             SELECT gen_random_uuid(), w.id, i.id, i.account_id, i.type, CASE WHEN w.enabled THEN 'pending' ELSE 'skipped' END,
                    i.created_at, i.created_at, CASE WHEN w.enabled THEN NULL ELSE i.created_at END
             FROM event e JOIN input i ON i.id = e.id JOIN wanting w ON w.events IS NULL OR i.type = ANY (w.events)
             ORDER BY i.ord, w.id`,
    },
    [
      events.map((e) => e.id),
      events.map((e) => e.type),
      events.map((e) => e.accountId),
      events.map((e) => e.body),
      events.map((e) => e.at),
      events.map((e) => (e.accountId === null ? null : orderingLockName(e.accountId))),
    ],
  );
}

/** A `ping`: its event, and one delivery to the endpoint alone. */
export async function insertPing(tx: Queryable, event: NewEvent, endpointId: string, deliveryId: string): Promise<void> {
  await tx.query('INSERT INTO events (id, type, account_id, body, created_at) VALUES ($1, $2, NULL, $3, $4)', [event.id, event.type, event.body, event.at]);
  await tx.query(
    `INSERT INTO event_deliveries (id, endpoint_id, event_id, account_id, type, state, next_attempt_at, created_at) VALUES ($1, $2, $3, NULL, $4, 'pending', $5, $5)`,
    [deliveryId, endpointId, event.id, event.type, event.at],
  );
}

// ------------------------------------------------------------------ sending

/** A delivery leased for sending, with what it takes to send it. */
export type DueDelivery = Pick<EventDeliveryRecord, 'id' | 'endpoint_id' | 'event_id' | 'type' | 'step'> &
  Pick<EventEndpointRecord, 'url' | 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_until'> & { body: string };

/**
 * Deliveries read per endpoint by one lease, from the front of its due queue: what bounds a
 * lease's work however many wait.
 */
export const LEASE_SCAN = 512;
/**
 * "Still pending", for an update of rows already found: said as "not finished" so that the
 * planner cannot read it as the due index's predicate (`state = 'pending'`) and scan that
 * whole index to intersect it with the rows, as it did with the table's statistics stale.
 */
const FINISHED = "('delivered', 'dead', 'skipped')";
/** A delivery with more than one ahead of it is held this much longer: its turn comes when the one before it finishes. */
const DEEPER_HOLD = '5 minutes';

/**
 * Leases up to `limit` deliveries that are due, soonest due first, at most `capacity(endpoint)`
 * per endpoint (`busy` lists the endpoints with fewer free places than `perEndpoint`, and how
 * many). A delivery waits while an earlier one of its endpoint and account is pending, so
 * each account's events reach an endpoint in order. The lease, not a row lock, marks it as
 * being sent: a worker that dies mid-send leaves it to be sent again when the lease runs out.
 *
 * Each endpoint's due deliveries are read from the front, LEASE_SCAN at most, so a lease's
 * work is bounded however many wait. What is found waiting behind an earlier delivery is
 * set aside (`held_until`) when reading it again at every lease would be waste:
 * - behind one that cannot go yet (its retry, or a hold of its own): until it can, so a
 *   receiver that is down leaves its backlog set aside rather than re-read five times a
 *   second;
 * - further back than next in line, when the front of an endpoint's queue has nothing that
 *   can go (one account's long run of events fills it): until the one ahead's lease ends,
 *   and five minutes more, so other accounts' deliveries behind the run are reached.
 * What waits right behind a delivery being sent stays as it is: it is next, and holding it
 * would cost a write per delivery in every burst. Finishing a delivery lets the one next in
 * line go at once if it was held (markDelivered, markFailed), so a hold only bounds how long
 * one waits if that is missed: a finish recorded between this statement's read and its
 * write, of a delivery it saw waiting for its retry (sent meanwhile by another worker),
 * leaves the next one held until this lease's end. `held` is how many were set aside, so
 * that the sender looks again at once while a backlog is being put aside.
 *
 * The holds and the lease update the row versions the statement read (`ctid`): the planner
 * can only fetch those directly, where an update by id was planned, on stale statistics, as
 * a scan of the whole table; and a row changed since it was read (leased by another worker,
 * finished) no longer matches and is left alone. Each update joins the rows it found by
 * `ctid` as well: with the list alone, a planner that takes the table for a few pages reads
 * it whole rather than fetch the rows. The leased rows' event and endpoint are joined after
 * the update, not in it: joined in it, the planner could start from the endpoints and read
 * each one's every delivery to find the leased ones (23 ms a lease beside 20,000 waiting for
 * a receiver that is down).
 */
export async function leaseDue(
  db: Queryable,
  now: Date,
  leaseUntil: Date,
  limit: number,
  perEndpoint: number,
  busy: { ids: string[]; free: number[] },
): Promise<{ due: DueDelivery[]; held: number }> {
  const rows = await db.query<DueDelivery & { id: string | null; held: number }>(
    {
      name: 'event_deliveries_lease',
      text: `WITH scan AS (
               SELECT d.id, d.tid, d.seq, d.endpoint_id, d.account_id, COALESCE(busy.free, $4) AS free
               FROM event_endpoints ep
               LEFT JOIN unnest($5::uuid[], $6::int[]) AS busy (id, free) ON busy.id = ep.id
               CROSS JOIN LATERAL (
                 SELECT d.id, d.ctid AS tid, d.seq, d.endpoint_id, d.account_id FROM event_deliveries d
                 WHERE d.endpoint_id = ep.id AND d.state = 'pending' AND GREATEST(d.next_attempt_at, d.held_until) <= $1
                   AND (d.leased_until IS NULL OR d.leased_until <= $1)
                 ORDER BY GREATEST(d.next_attempt_at, d.held_until), d.seq LIMIT ${LEASE_SCAN}
               ) d
               WHERE ep.enabled
             ), judged AS (
               SELECT scan.*, ahead.seq AS ahead_seq, GREATEST(ahead.next_attempt_at, ahead.held_until, ahead.leased_until, $2) AS hold,
                      GREATEST(ahead.next_attempt_at, ahead.held_until) > $1 AND (ahead.leased_until IS NULL OR ahead.leased_until <= $1) AS ahead_waits
               FROM scan LEFT JOIN LATERAL (
                 SELECT e.seq, e.next_attempt_at, e.held_until, e.leased_until FROM event_deliveries e
                 WHERE e.endpoint_id = scan.endpoint_id AND e.account_id = scan.account_id AND e.state = 'pending' AND e.seq < scan.seq
                 ORDER BY e.endpoint_id, e.account_id, e.seq LIMIT 1
               ) ahead ON true
             ), ranked AS (
               SELECT tid, seq, free, row_number() OVER (PARTITION BY endpoint_id ORDER BY seq) AS rank FROM judged WHERE ahead_seq IS NULL
             ), picked AS (
               SELECT tid FROM ranked WHERE rank <= free ORDER BY seq LIMIT $3
             ), clogged AS (
               SELECT endpoint_id FROM judged GROUP BY endpoint_id, free HAVING count(*) FILTER (WHERE ahead_seq IS NULL) = 0 AND free > 0
             ), holding AS (
               SELECT judged.tid, judged.hold, judged.ahead_waits,
                      (SELECT m.seq FROM event_deliveries m
                       WHERE m.endpoint_id = judged.endpoint_id AND m.account_id = judged.account_id AND m.state = 'pending' AND m.seq > judged.ahead_seq
                       ORDER BY m.endpoint_id, m.account_id, m.seq LIMIT 1) < judged.seq AS deeper
               FROM judged WHERE judged.ahead_waits OR judged.endpoint_id IN (SELECT endpoint_id FROM clogged)
             ), held AS (
               UPDATE event_deliveries d SET held_until = holding.hold + CASE WHEN holding.deeper THEN interval '${DEEPER_HOLD}' ELSE interval '0' END
               FROM holding
               WHERE d.ctid = ANY (ARRAY (SELECT tid FROM holding WHERE ahead_waits OR deeper)) AND d.ctid = holding.tid
               RETURNING d.id
             ), leased AS (
               UPDATE event_deliveries d SET leased_until = $2
               FROM picked
               WHERE d.ctid = ANY (ARRAY (SELECT tid FROM picked)) AND d.ctid = picked.tid
               RETURNING d.id, d.endpoint_id, d.event_id, d.type, d.step
             ), sending AS (
               SELECT leased.*, ev.body, ep.url, ep.secret_sealed, ep.previous_secret_sealed, ep.previous_secret_until
               FROM leased JOIN events ev ON ev.id = leased.event_id JOIN event_endpoints ep ON ep.id = leased.endpoint_id
             )
             SELECT sending.*, (SELECT count(*) FROM held)::int AS held FROM (SELECT) AS one LEFT JOIN sending ON true`,
    },
    [now, leaseUntil, limit, perEndpoint, busy.ids, busy.free],
  );
  const due = rows.filter((row) => row.id !== null).map(({ held: _held, ...delivery }) => delivery);
  return { due, held: rows[0]?.held ?? 0 };
}

/**
 * What letting the next go does, in the statement that finishes deliveries (markDelivered,
 * markFailed): the first pending delivery behind each finished one (the statement's CTE
 * `finished`: rows with endpoint_id, account_id, seq), if held, is due now rather than when
 * its hold runs out.
 * `others` excludes the finished rows themselves, which the statement's snapshot still
 * shows pending. A row not held is not written: no write per delivery while nothing waits.
 * By id, not by ctid as leaseDue picks: a row another transaction writes meanwhile (another
 * worker's lease holding it again) gets a new ctid, and the update, once that transaction
 * commits, checks the row's new version; by ctid it would find nothing there and leave the
 * row held until its hold ran out. Still held then, it goes now.
 */
const letNextGo = (others: string) => `released AS (
               UPDATE event_deliveries n SET held_until = $4
               WHERE n.id = ANY (ARRAY (
                 SELECT (SELECT e.id FROM event_deliveries e
                         WHERE e.endpoint_id = f.endpoint_id AND e.account_id = f.account_id AND e.state = 'pending' AND e.seq > f.seq AND ${others}
                         ORDER BY e.endpoint_id, e.account_id, e.seq LIMIT 1)
                 FROM finished f WHERE f.account_id IS NOT NULL
               )) AND n.held_until > $4
             )`;

/** Leased deliveries given back unsent (a worker stopping): due again at once. */
export async function releaseLeases(db: Queryable, ids: string[]): Promise<void> {
  await db.query(`UPDATE event_deliveries SET leased_until = NULL WHERE id = ANY($1::uuid[]) AND state = 'pending'`, [ids]);
}

const LOG_APPEND = `(CASE WHEN jsonb_array_length(attempts_log) >= 10 THEN attempts_log - 0 ELSE attempts_log END) || jsonb_build_array($3::jsonb)`;

/** One delivery that got a 2xx, and its attempt for the log. */
export type Delivered = { id: string; status: number; attempt: AttemptLogEntry };

/**
 * 2xx answers: delivered, each endpoint's run of failures is over, and the next of each
 * account goes. One statement for many deliveries (the sender groups them), so a busy
 * sender costs few round trips.
 *
 * Not prepared by name (nor is markFailed's), so each run is planned with the values it is
 * given, at the table's size of the moment. Prepared, PostgreSQL settled after a few runs on
 * one plan for any values, made while the table was small; where no ANALYZE came to replace
 * it (autovacuum off), that plan read the whole table to find a batch's deliveries and their
 * next: 60 ms for a batch of 64 at 100,000 deliveries instead of 4. Planning costs under a
 * millisecond a batch.
 */
export async function markDelivered(db: Queryable, delivered: Delivered[], now: Date): Promise<void> {
  await db.query(
    `WITH done AS (
       SELECT * FROM unnest($1::uuid[], $2::int[], $3::jsonb[]) AS t (id, status, attempt)
     ), d AS (
       UPDATE event_deliveries e SET state = 'delivered', attempts = e.attempts + 1, step = e.step + 1, last_status = done.status,
              last_error = NULL, leased_until = NULL, finished_at = $4,
              attempts_log = (CASE WHEN jsonb_array_length(e.attempts_log) >= 10 THEN e.attempts_log - 0 ELSE e.attempts_log END) || jsonb_build_array(done.attempt)
       FROM done WHERE e.id = done.id AND e.state NOT IN ${FINISHED} RETURNING e.endpoint_id, e.account_id, e.seq
     ), finished AS (SELECT * FROM d), ${letNextGo('e.id <> ALL ($1::uuid[])')}
     UPDATE event_endpoints ep SET failing_since = NULL WHERE ep.id IN (SELECT endpoint_id FROM d) AND ep.failing_since IS NOT NULL`,
    [delivered.map((row) => row.id), delivered.map((row) => row.status), delivered.map((row) => JSON.stringify(row.attempt)), now],
  );
}

export type FailedAttempt = { status: number | null; error: string; attempt: AttemptLogEntry; retryAt: Date | null };

/**
 * Anything but a 2xx: tried again at `retryAt`, or dead when there is none (and the next of
 * its account goes). Returns since when the endpoint has had no 2xx, and whether it is still
 * enabled.
 */
export async function markFailed(db: Queryable, id: string, failed: FailedAttempt, now: Date): Promise<Pick<EventEndpointRecord, 'id' | 'failing_since' | 'enabled' | 'url'> | undefined> {
  const [endpoint] = await db.query<Pick<EventEndpointRecord, 'id' | 'failing_since' | 'enabled' | 'url'>>(
    `WITH d AS (
       UPDATE event_deliveries SET state = CASE WHEN $5::timestamptz IS NULL THEN 'dead' ELSE 'pending' END,
              attempts = attempts + 1, step = step + 1, last_status = $2, last_error = $6,
              next_attempt_at = COALESCE($5, next_attempt_at), leased_until = NULL,
              finished_at = CASE WHEN $5::timestamptz IS NULL THEN $4::timestamptz END, attempts_log = ${LOG_APPEND}
       WHERE id = $1 AND state = 'pending' RETURNING endpoint_id, account_id, seq, state
     ), finished AS (SELECT * FROM d WHERE state = 'dead'), ${letNextGo('e.id <> $1')}
     UPDATE event_endpoints ep SET failing_since = COALESCE(ep.failing_since, $4) FROM d WHERE ep.id = d.endpoint_id
     RETURNING ep.id, ep.failing_since, ep.enabled, ep.url`,
    [id, failed.status, JSON.stringify(failed.attempt), now, failed.retryAt, failed.error],
  );
  return endpoint;
}

// ------------------------------------------------------------------ operators

export type DeliveryRow = Omit<EventDeliveryRecord, 'leased_until' | 'held_until' | 'account_id' | 'step' | 'finished_at'>;
const DELIVERY_COLUMNS = 'id, seq, endpoint_id, event_id, type, state, attempts, last_status, last_error, next_attempt_at, attempts_log, created_at';

export type DeliveryFilter = { endpointId?: string; state?: DeliveryState; type?: string };

/** Newest first, after the cursor's seq. */
export function listDeliveryRows(db: Queryable, filter: DeliveryFilter, beforeSeq: string | undefined, limit: number): Promise<DeliveryRow[]> {
  return db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM event_deliveries
     WHERE ($1::uuid IS NULL OR endpoint_id = $1) AND ($2::text IS NULL OR state = $2) AND ($3::text IS NULL OR type = $3)
       AND ($4::bigint IS NULL OR seq < $4)
     ORDER BY seq DESC LIMIT ${limit}`,
    [filter.endpointId ?? null, filter.state ?? null, filter.type ?? null, beforeSeq ?? null],
  );
}

export async function deliveryRow(db: Queryable, id: string): Promise<(DeliveryRow & { body: string }) | undefined> {
  const [row] = await db.query<DeliveryRow & { body: string }>(
    `SELECT ${DELIVERY_COLUMNS.replace(/(\w+)/g, 'd.$1')}, ev.body FROM event_deliveries d JOIN events ev ON ev.id = d.event_id WHERE d.id = $1`,
    [id],
  );
  return row;
}

/** Queues the delivery again from the start of the schedule, now; its endpoint id, or undefined. */
export async function requeueDelivery(tx: Queryable, id: string, now: Date): Promise<{ endpoint_id: string; enabled: boolean } | undefined> {
  const [row] = await tx.query<{ endpoint_id: string; enabled: boolean }>(
    `UPDATE event_deliveries d SET state = 'pending', step = 0, next_attempt_at = $2, held_until = NULL, finished_at = NULL
     FROM event_endpoints ep WHERE d.id = $1 AND ep.id = d.endpoint_id AND ep.enabled RETURNING d.endpoint_id, ep.enabled`,
    [id, now],
  );
  return row;
}

/** The endpoint's dead and skipped deliveries (made at or after `since`), queued again; how many. */
export async function requeueFinished(tx: Queryable, endpointId: string, since: Date | null, now: Date): Promise<number> {
  const rows = await tx.query(
    `UPDATE event_deliveries SET state = 'pending', step = 0, next_attempt_at = $3, held_until = NULL, finished_at = NULL
     WHERE endpoint_id = $1 AND state IN ('dead', 'skipped') AND ($2::timestamptz IS NULL OR created_at >= $2) RETURNING id`,
    [endpointId, since, now],
  );
  return rows.length;
}

/** When the oldest pending delivery was made (null when none is); for the metrics. */
export async function oldestPending(db: Queryable): Promise<Date | null> {
  const [row] = await db.query<{ oldest: Date | null }>(`SELECT min(created_at) AS oldest FROM event_deliveries WHERE state = 'pending'`);
  return row.oldest;
}

export type EndpointBacklog = Pick<EventEndpointRecord, 'id' | 'url' | 'enabled'> & { oldest_pending: Date | null };

/** Every endpoint, oldest first, with when its oldest pending delivery was made (null when none is). */
export function endpointBacklogs(db: Queryable): Promise<EndpointBacklog[]> {
  return db.query<EndpointBacklog>(
    `SELECT e.id, e.url, e.enabled,
            (SELECT d.created_at FROM event_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending' ORDER BY d.created_at LIMIT 1) AS oldest_pending
     FROM event_endpoints e ORDER BY e.created_at, e.id`,
  );
}

/** Retention: delivered deliveries finished before `before`, then events no delivery needs; how many rows went. */
export async function deleteDeliveredBefore(db: Queryable, before: Date, batch: number): Promise<number> {
  const deliveries = await db.query(
    // The state again on the locked row: a retry that sent it back to pending meanwhile keeps it.
    `DELETE FROM event_deliveries WHERE id IN (SELECT id FROM event_deliveries WHERE state = 'delivered' AND finished_at < $1 LIMIT ${batch}) AND state = 'delivered' RETURNING id`,
    [before],
  );
  const events = await db.query(
    `DELETE FROM events WHERE id IN (
       SELECT ev.id FROM events ev WHERE ev.created_at < $1 AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = ev.id) LIMIT ${batch}
     ) RETURNING id`,
    [before],
  );
  return deliveries.length + events.length;
}
