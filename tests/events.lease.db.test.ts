import { randomBytes, randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSecretBox } from '../server/src/lib/crypto.ts';
import { createDatabase, type Db } from '../server/src/lib/db.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { migrate } from '../server/src/migrations/index.ts';
import { LEASE_SCAN, leaseDue, markDelivered, markFailed, type DueDelivery } from '../server/src/modules/events/events.repo.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';

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

  const failed = { status: 500, error: 'HTTP 500', attempt: { ...attempt(at(now, 2 * SECOND)), status: 500, error: 'HTTP 500' } };
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
  const chain = await queue(context, 2, now);
  assert.equal(ids((await lease(context, now)).due), [chain[0]]);
  const failed = { status: 500, error: 'HTTP 500', attempt: { ...attempt(now), status: 500, error: 'HTTP 500' } };
  await markFailed(context.db, chain[0], { ...failed, retryAt: at(now, 10 * SECOND) }, now);
  const heldUntil = async () => (await context.db.query<{ held_until: Date }>('SELECT held_until FROM event_deliveries WHERE id = $1', [chain[1]]))[0].held_until.getTime();

  assert.equal(await lease(context, at(now, SECOND)), { due: [], held: 1 });
  assert.is(await heldUntil(), now.getTime() + SECOND + LEASE_MS, "until the retry, and at least this lease's length");
  assert.equal(ids((await lease(context, at(now, 11 * SECOND))).due), [chain[0]]);
  await markFailed(context.db, chain[0], { ...failed, retryAt: at(now, 300 * SECOND) }, at(now, 12 * SECOND));
  assert.equal(await lease(context, at(now, LEASE_MS + 2 * SECOND)), { due: [], held: 1 });
  assert.is(await heldUntil(), now.getTime() + 300 * SECOND);
});

test.run();
