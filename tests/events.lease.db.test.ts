import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSecretBox } from '../server/src/lib/crypto.ts';
import { createDatabase, type Db } from '../server/src/lib/db.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { migrate } from '../server/src/migrations/index.ts';
import { LEASE_SCAN, leaseDue, markDelivered, markFailed, type DueDelivery } from '../server/src/modules/events/events.repo.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { eventually } from './helpers/wait.ts';

// The event sender's lease (events.repo.ts, leaseDue) against a real database, with the
// clock passed in: each account's deliveries go one at a time and in order; the ones found
// waiting behind another that cannot go are set aside out of the next lease's way, so that
// a receiver that is down does not make every lease read its whole backlog; and finishing a
// delivery lets the next of its account go at once rather than when its hold runs out.

const LEASE_MS = 18_000;
const SECOND = 1_000;

type Context = { database: TestDatabase; db: Db; endpoint: string };
const test = suite<Context>('events out: the lease sets aside what waits and lets it go when its turn comes');
const logger = createLogger('silent');

test.before(async (context) => {
  context.database = await createTestDatabase({ migrated: true });
  context.db = await createDatabase({ databaseUrl: context.database.env.DATABASE_URL, dataDir: context.database.env.DATA_DIR, logger });
  const key = randomBytes(32);
  await migrate(context.db, logger, { secretBox: createSecretBox([key]), dataKeys: [key] });
});
test.after(async (context) => {
  await context.db?.close();
  await context.database?.drop();
});
// Each test has an endpoint of its own, so that no test leases another's deliveries.
test.before.each(async (context) => {
  context.endpoint = randomUUID();
  await context.db.query(`INSERT INTO event_endpoints (id, url, secret_sealed, created_at, updated_at) VALUES ($1, 'http://127.0.0.1:9/', 'unused', now(), now())`, [
    context.endpoint,
  ]);
});
test.after.each(async (context) => {
  await context.db.query('DELETE FROM event_endpoints WHERE id = $1', [context.endpoint]);
});

let accounts = 1000;
/** `count` deliveries of a new account to the endpoint, each due at `dueAt`; their ids in seq order (the order the sender keeps). */
async function queue(context: Context, count: number, dueAt: Date, account = ++accounts): Promise<string[]> {
  const rows = await context.db.query<{ id: string; seq: string }>(
    `WITH ev AS (
       INSERT INTO events (id, type, account_id, body, created_at)
       SELECT 'msg_' || gen_random_uuid(), 'security.changed', $2, '{}', $3 FROM generate_series(1, $1::int) RETURNING id
     )
     INSERT INTO event_deliveries (id, endpoint_id, event_id, account_id, type, state, next_attempt_at, created_at)
     SELECT gen_random_uuid(), $4, ev.id, $2, 'security.changed', 'pending', $3, $3 FROM ev ORDER BY ev.id
     RETURNING id, seq`,
    [count, account, dueAt, context.endpoint],
  );
  return rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map((row) => row.id);
}

const lease = (context: Context, now: Date) => leaseDue(context.db, now, new Date(now.getTime() + LEASE_MS), 512, 128, { ids: [], free: [] });
const ids = (due: DueDelivery[]) => due.map((delivery) => delivery.id);
const at = (base: Date, ms: number) => new Date(base.getTime() + ms);
const attempt = (now: Date) => ({ at: now.toISOString(), status: 200, error: null, ms: 1 });
/** A 500 answer at `when`, as the sender records a failure; each call adds its own `retryAt`. */
const failedAttempt = (when: Date) => ({ status: 500, error: 'HTTP 500', attempt: { ...attempt(when), status: 500, error: 'HTTP 500' } });

/** Two deliveries of a new account, the first sent at `now` and answered 500, to be tried again 10 s later. Their ids. */
async function firstWaitingForRetry(context: Context, now: Date): Promise<string[]> {
  const chain = await queue(context, 2, now);
  assert.equal(ids((await lease(context, now)).due), [chain[0]]);
  await markFailed(context.db, chain[0], { ...failedAttempt(now), retryAt: at(now, 10 * SECOND) }, now);
  return chain;
}

test('a backlog behind a delivery that waits for its retry is set aside until then, and a later account is not held up by it', async (context) => {
  const now = new Date();
  const [head, ...behind] = await queue(context, 1 + 2 * LEASE_SCAN + 200, at(now, -60 * SECOND));
  const retryAt = at(now, 300 * SECOND);
  await context.db.query('UPDATE event_deliveries SET attempts = 1, step = 1, next_attempt_at = $2 WHERE id = $1', [head, retryAt]);
  const [other] = await queue(context, 1, now);

  // Each lease reads LEASE_SCAN deliveries of the endpoint at most, and sets aside the ones waiting.
  assert.equal(await lease(context, now), { due: [], held: LEASE_SCAN });
  assert.equal(await lease(context, now), { due: [], held: LEASE_SCAN });
  const third = await lease(context, now);
  assert.equal(ids(third.due), [other], "the other account's delivery, once what was in its way is set aside");
  assert.is(third.held, 200);
  await markDelivered(context.db, [{ id: other, status: 200, attempt: attempt(now) }], now);

  const holds = await context.db.query<{ held_until: Date }>('SELECT held_until FROM event_deliveries WHERE id = ANY ($1::uuid[]) ORDER BY seq', [behind]);
  assert.is(holds[0].held_until.getTime(), retryAt.getTime(), 'the next in line, until the one ahead is tried again');
  assert.equal([...new Set(holds.slice(1).map((row) => row.held_until.getTime()))], [retryAt.getTime() + 300 * SECOND], 'the ones further back, five minutes more');
  // Nothing is left in the part of the due index that a lease reads: the next one reads nothing.
  const [{ due }] = await context.db.query<{ due: number }>(
    `SELECT count(*)::int AS due FROM event_deliveries WHERE endpoint_id = $1 AND state = 'pending' AND GREATEST(next_attempt_at, held_until) <= $2 AND leased_until IS NULL`,
    [context.endpoint, at(now, SECOND)],
  );
  assert.is(due, 0);
  assert.equal(await lease(context, at(now, SECOND)), { due: [], held: 0 });

  // At the retry the one ahead goes; the next in line is due with it and waits behind it, unwritten.
  const retry = await lease(context, at(retryAt, 1));
  assert.equal(retry, { due: retry.due, held: 0 });
  assert.equal(ids(retry.due), [head]);
  assert.equal(await lease(context, at(retryAt, 2)), { due: [], held: 0 });
  // It arrives: the next goes; when that one arrives, the one after it is let go at once, well before its five minutes.
  await markDelivered(context.db, [{ id: head, status: 200, attempt: attempt(at(retryAt, 3)) }], at(retryAt, 3));
  assert.equal(ids((await lease(context, at(retryAt, 3))).due), [behind[0]]);
  await markDelivered(context.db, [{ id: behind[0], status: 200, attempt: attempt(at(retryAt, 4)) }], at(retryAt, 4));
  assert.equal(ids((await lease(context, at(retryAt, 4))).due), [behind[1]]);
});

test('a delivered or dead delivery lets the next of its account go at once; a retry keeps it waiting', async (context) => {
  const now = new Date();
  const chain = await queue(context, 4, now);
  assert.equal(await lease(context, now).then((r) => ({ due: ids(r.due), held: r.held })), { due: [chain[0]], held: 0 }, 'one at a time, the oldest first');
  // Nothing else of the endpoint can go: the ones further back than next in line are set aside.
  assert.equal(await lease(context, at(now, SECOND)), { due: [], held: 2 });

  await markDelivered(context.db, [{ id: chain[0], status: 200, attempt: attempt(at(now, SECOND)) }], at(now, SECOND));
  assert.equal(ids((await lease(context, at(now, SECOND))).due), [chain[1]]);

  const failed = failedAttempt(at(now, 2 * SECOND));
  await markFailed(context.db, chain[1], { ...failed, retryAt: at(now, 60 * SECOND) }, at(now, 2 * SECOND));
  assert.equal(ids((await lease(context, at(now, 3 * SECOND))).due), [], 'a retry keeps the next waiting');

  assert.equal(ids((await lease(context, at(now, 61 * SECOND))).due), [chain[1]]);
  await markFailed(context.db, chain[1], { ...failed, retryAt: null }, at(now, 62 * SECOND));
  assert.equal(ids((await lease(context, at(now, 62 * SECOND))).due), [chain[2]], 'after a dead one, the next goes at once, well before its hold runs out');
  await markDelivered(context.db, [{ id: chain[2], status: 200, attempt: attempt(at(now, 63 * SECOND)) }], at(now, 63 * SECOND));
  assert.equal(ids((await lease(context, at(now, 63 * SECOND))).due), [chain[3]]);
});

test('what waits right behind a delivery being sent is read, not written: a burst costs no write per delivery', async (context) => {
  const now = new Date();
  const chains = [await queue(context, 3, now), await queue(context, 3, now), await queue(context, 3, now)];
  const first = await leaseDue(context.db, now, at(now, LEASE_MS), 512, 128, { ids: [context.endpoint], free: [2] });
  assert.equal(ids(first.due).sort(), [chains[0][0], chains[1][0]].sort());
  assert.is(first.held, 0);
  const second = await leaseDue(context.db, now, at(now, LEASE_MS), 512, 128, { ids: [context.endpoint], free: [2] });
  assert.equal(ids(second.due), [chains[2][0]]);
  assert.is(second.held, 0);
  const [{ held }] = await context.db.query<{ held: number }>('SELECT count(*)::int AS held FROM event_deliveries WHERE endpoint_id = $1 AND held_until IS NOT NULL', [context.endpoint]);
  assert.is(held, 0);
});

test('a delivery set aside behind one waiting for its retry is read again at that retry, and set aside again if it fails again', async (context) => {
  const now = new Date();
  const chain = await firstWaitingForRetry(context, now);
  const heldUntil = async () => (await context.db.query<{ held_until: Date }>('SELECT held_until FROM event_deliveries WHERE id = $1', [chain[1]]))[0].held_until.getTime();

  assert.equal(await lease(context, at(now, SECOND)), { due: [], held: 1 });
  assert.is(await heldUntil(), now.getTime() + SECOND + LEASE_MS, "until the retry, and at least this lease's length");
  assert.equal(ids((await lease(context, at(now, 11 * SECOND))).due), [chain[0]]);
  await markFailed(context.db, chain[0], { ...failedAttempt(now), retryAt: at(now, 300 * SECOND) }, at(now, 12 * SECOND));
  assert.equal(await lease(context, at(now, LEASE_MS + 2 * SECOND)), { due: [], held: 1 });
  assert.is(await heldUntil(), now.getTime() + 300 * SECOND);
});

test('finishing deliveries is planned at the table\'s size of the moment: a plan made while it was small does not read it whole later', async () => {
  // A database of its own, whose deliveries table starts empty, as a new deployment's does.
  const database = await createTestDatabase({ migrated: true });
  const own = await createDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR, logger });
  // One connection: a statement prepared by name keeps its plans per connection, and after a
  // few runs PostgreSQL settles on one plan for any values when that looks no costlier. A
  // plan made while the table was small looks cheap; with autovacuum off, no ANALYZE comes to
  // replace it. On the embedded database there is only one connection.
  const client = database.env.DATABASE_URL ? new pg.Client({ connectionString: database.env.DATABASE_URL }) : undefined;
  await client?.connect();
  const db = (client ? { query: async (sql: string | { text: string; name?: string }, values?: unknown[]) => (await client.query(typeof sql === 'string' ? { text: sql, values } : { ...sql, values })).rows } : own) as Db;
  try {
    const key = randomBytes(32);
    await migrate(own, logger, { secretBox: createSecretBox([key]), dataKeys: [key] });
    const endpoint = randomUUID();
    await db.query(`INSERT INTO event_endpoints (id, url, secret_sealed, created_at, updated_at) VALUES ($1, 'http://127.0.0.1:9/', 'unused', now(), now())`, [endpoint]);
    const now = new Date();
    /** Two deliveries for each of `accounts` accounts from `first` on, the second held for an hour. */
    const queueHeld = (first: number, accounts: number) =>
      db.query(
        `WITH ev AS (
           INSERT INTO events (id, type, account_id, body, created_at)
           SELECT 'msg_' || gen_random_uuid(), 'security.changed', $2::int + g / 2, '{}', $4 FROM generate_series(0, 2 * $3::int - 1) g RETURNING id, account_id
         )
         INSERT INTO event_deliveries (id, endpoint_id, event_id, account_id, type, state, next_attempt_at, held_until, created_at)
         SELECT gen_random_uuid(), $1, ev.id, ev.account_id, 'security.changed', 'pending', $4, $4::timestamptz + interval '1 hour', $4 FROM ev ORDER BY ev.account_id, ev.id`,
        [endpoint, first, accounts, now],
      );
    /** The first delivery of `count` accounts from `from` on that have had none delivered yet. */
    const firstOf = (from: number, count: number) =>
      db.query<{ id: string }>(
        `SELECT DISTINCT ON (account_id) id FROM event_deliveries d
         WHERE account_id >= $1 AND NOT EXISTS (SELECT FROM event_deliveries x WHERE x.account_id = d.account_id AND x.state <> 'pending')
         ORDER BY account_id, seq LIMIT $2`,
        [from, count],
      );
    const finish = (rows: Array<{ id: string }>) => markDelivered(db, rows.map(({ id }) => ({ id, status: 200, attempt: attempt(now) })), now);
    await queueHeld(1, 8);
    for (const row of await firstOf(1, 8)) await finish([row]);
    await queueHeld(100_000, 10_000);
    for (let n = 0; n < 12; n++) await finish(await firstOf(100_000, 64));
    const batch = await firstOf(100_000, 64);
    // This connection's count of whole-table reads, not yet reported (other statements of it
    // may be in it too: the difference across the one statement is what it read).
    const seqScans = async () =>
      (await db.query<{ scans: number }>(`SELECT pg_stat_get_xact_numscans('event_deliveries'::regclass)::int AS scans`))[0].scans;
    await db.query('BEGIN');
    const before = await seqScans();
    await finish(batch);
    const scans = (await seqScans()) - before;
    await db.query('COMMIT');
    assert.is(scans, 0, 'no read of the whole table');
    const [{ released }] = await db.query<{ released: number }>(`SELECT count(*)::int AS released FROM event_deliveries WHERE account_id >= 100000 AND held_until = $1`, [now]);
    assert.is(released, 13 * 64, 'the next of each account goes at once');
  } finally {
    await client?.end();
    await own.close();
    await database.drop();
  }
});

// A second connection holding a row lock needs a database server: the embedded database
// takes one connection at a time.
if (process.env.DATABASE_URL) {
  test('the next of an account goes at once even when its row was written meanwhile by another transaction', async (context) => {
    const now = new Date();
    const chain = await firstWaitingForRetry(context, now);
    assert.equal(await lease(context, at(now, SECOND)), { due: [], held: 1 }, 'set aside until the retry, and a lease length at least');
    assert.equal(ids((await lease(context, at(now, 11 * SECOND))).due), [chain[0]]);
    // Another worker's lease, say, writes the held row and has not committed yet: the
    // finishing statement waits for it, then finds the row's new version, not the one it read.
    const other = new pg.Client({ connectionString: context.database.env.DATABASE_URL });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('UPDATE event_deliveries SET held_until = held_until WHERE id = $1', [chain[1]]);
      const finishing = markDelivered(context.db, [{ id: chain[0], status: 200, attempt: attempt(at(now, 12 * SECOND)) }], at(now, 12 * SECOND));
      await eventually('the finishing statement waits for the row lock', async () => {
        const [{ waiting }] = await context.db.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%released AS%'`,
        );
        return waiting === 1;
      });
      await other.query('COMMIT');
      await finishing;
    } finally {
      await other.end();
    }
    assert.equal(ids((await lease(context, at(now, 12 * SECOND))).due), [chain[1]], 'due at once, not when its hold runs out');
  });
}

test.run();
