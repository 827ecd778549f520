import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { QUEUES } from '../server/src/jobs.ts';
import { applyWaitingEntries } from '../server/src/webhooks/inbox/processor.ts';
import { deleteDeliveries, reopenDeliveries, waitingRows } from '../server/src/webhooks/inbox/repo.ts';
import { sweepInbox } from '../server/src/webhooks/inbox/sweeper.ts';
import { startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// The worker applies kept deliveries straight from the inbox and gives a job only to those
// that need the queue; the sweeper hands it the rows left waiting past its cutoff. These
// run on a gateway with no worker, so that no lane takes a row before the test looks: the
// tests play the worker's part themselves.

let service: TestService;

test.before(async () => {
  service = await startTestApp({}, { role: 'gateway' });
});

test.after(async () => {
  await service?.close();
});

/** A row as the gateway keeps it, `ageMs` old on the service's clock; its provider is one the worker ignores. */
async function keep(ageMs: number): Promise<string> {
  const id = randomUUID();
  await service.deps.db.query(
    `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at) VALUES ($1, 'retired-provider', '', $2, $3, $4)`,
    [id, randomUUID(), Buffer.from('{}'), new Date(service.clock.now().getTime() - ageMs)],
  );
  return id;
}

async function state(id: string) {
  const [row] = await service.deps.db.query<{ state: string; enqueued: boolean }>(
    'SELECT state, enqueued_at IS NOT NULL AS enqueued FROM webhook_inbox WHERE id = $1',
    [id],
  );
  const jobs = await service.deps.db.query<{ id: string; state: string }>(`SELECT id, state FROM pgboss.job WHERE name = $1 AND data->>'inboxId' = $2`, [
    QUEUES.webhook,
    id,
  ]);
  return { ...row, jobs };
}

const waitingIds = async () => (await waitingRows(service.deps.db, 1000)).map((row) => row.id);

/** What the worker's look finds waiting, applied as its lanes apply it; returns the ids taken. */
async function applyAllWaiting(): Promise<string[]> {
  const { taken, failed } = await applyWaitingEntries(service.deps, await waitingIds());
  assert.not.ok(failed);
  return taken;
}

test('a row left waiting past the cutoff gets its job and is marked, and the lanes leave it to the job', async () => {
  const id = await keep(60_000);
  assert.is(await sweepInbox(service.deps), 1);
  assert.equal(await state(id), { state: 'received', enqueued: true, jobs: [{ id, state: 'created' }] });
  assert.not.ok((await waitingIds()).includes(id), 'no look finds a row with a job');
  // A second sweep finds it again only once its job has had the same time: none is added.
  assert.is(await sweepInbox(service.deps), 0);
  assert.is((await state(id)).jobs.length, 1);
});

test('a fresh row is left to the lanes, which apply it with no job', async () => {
  const id = await keep(1_000);
  assert.is(await sweepInbox(service.deps), 0);
  assert.ok((await applyAllWaiting()).includes(id));
  assert.equal(await state(id), { state: 'ignored', enqueued: false, jobs: [] });
});

/** Runs `work` while another transaction holds the row's lock, as a lane applying it does. */
async function whileHeld<T>(id: string, work: () => Promise<T>): Promise<T> {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked = () => {};
  const holding = new Promise<void>((resolve) => (locked = resolve));
  const holder = service.deps.db.transaction(async (tx) => {
    await tx.query('SELECT id FROM webhook_inbox WHERE id = $1 FOR UPDATE', [id]);
    locked();
    await released;
  });
  try {
    await holding;
    return await work();
  } finally {
    release();
    await holder;
  }
}

// The embedded database serves one connection: there nothing runs beside a transaction.
if (process.env.DATABASE_URL) {
  test('a row a transaction holds is skipped by the sweep, not waited for', async () => {
    const id = await keep(60_000);
    assert.is(await whileHeld(id, () => sweepInbox(service.deps)), 0);
    assert.equal(await state(id), { state: 'received', enqueued: false, jobs: [] });
    assert.is(await sweepInbox(service.deps), 1, 'swept once it is free');
  });

  test('a row a transaction holds is left out of a chunk, not waited for', async () => {
    const [held, free] = [await keep(1_000), await keep(1_000)];
    const { taken, failed } = await whileHeld(held, () => applyWaitingEntries(service.deps, [held, free]));
    assert.equal({ taken, failed }, { taken: [free], failed: false });
    assert.is((await state(held)).state, 'received');
    assert.is((await state(free)).state, 'ignored');
    assert.ok((await applyAllWaiting()).includes(held), 'taken by the next look once it is free');
  });
}

/** A settled row (`state`) of a provider of its own, received `ageMs` before now on the service's clock. */
async function settled(state: 'dead' | 'ignored', provider: string, ageMs: number): Promise<string> {
  const id = randomUUID();
  await service.deps.db.query(
    `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at, state, processed_at) VALUES ($1, $2, '', $3, $4, $5, $6, $5)`,
    [id, provider, randomUUID(), Buffer.from('{}'), new Date(service.clock.now().getTime() - ageMs), state],
  );
  return id;
}

test('a bulk replay goes on after its last batch: a delivery replayed and ignored again is not taken twice', async () => {
  const provider = `replay-${randomUUID().slice(0, 8)}`;
  const rows = [await settled('ignored', provider, 3_000), await settled('ignored', provider, 2_000), await settled('ignored', provider, 1_000)];
  const filter = { provider: provider as never, state: 'ignored' as const };
  const first = await service.deps.db.transaction((tx) => reopenDeliveries(tx, filter, service.clock.now(), 2));
  assert.equal(first.ids, rows.slice(0, 2), 'oldest first');
  // The worker applies them and ignores them again before the next batch.
  await service.deps.db.query(`UPDATE webhook_inbox SET state = 'ignored' WHERE id = ANY($1)`, [first.ids]);
  const second = await service.deps.db.transaction((tx) => reopenDeliveries(tx, filter, service.clock.now(), 2, first.last));
  assert.equal(second.ids, [rows[2]]);
  const third = await service.deps.db.transaction((tx) => reopenDeliveries(tx, filter, service.clock.now(), 2, second.last));
  assert.equal(third.ids, []);
});

// A second connection holds a row lock: PostgreSQL only (the embedded database has one).
if (process.env.DATABASE_URL) {
  test('a purge leaves a delivery that a replay put back to received while the purge waited for it', async () => {
    const provider = `purge-${randomUUID().slice(0, 8)}`;
    const id = await settled('dead', provider, 60_000);
    const other = new pg.Client({ connectionString: service.env.DATABASE_URL });
    await other.connect();
    try {
      await other.query('BEGIN');
      // A replay's reopening, not committed yet.
      await other.query(`UPDATE webhook_inbox SET state = 'received', processed_at = NULL WHERE id = $1`, [id]);
      const purging = deleteDeliveries(service.deps.db, { states: ['dead'], before: service.clock.now(), provider: provider as never }, 1000);
      await eventually('the purge waits for the row', async () => {
        const [{ waiting }] = await service.deps.db.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'DELETE FROM webhook_inbox%'`,
        );
        return waiting === 1;
      });
      await other.query('COMMIT');
      assert.is(await purging, 0);
    } finally {
      await other.end();
    }
    assert.equal((await state(id)).state, 'received', 'kept, for its replay');
  });
}

test.run();
