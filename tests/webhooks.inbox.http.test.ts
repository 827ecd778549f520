import { randomBytes, randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QUEUES } from '../server/src/jobs.ts';
import { sweepInbox } from '../server/src/webhooks/inbox/sweeper.ts';
import { createInboxWriter } from '../server/src/webhooks/inbox/writer.ts';
import { createSignal } from '../server/src/lib/signal.ts';
import type { TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';
import { post, startWithOwner, viberHeaders, viberMessage, viberToken } from './helpers/webhook-fixtures.ts';

// The durable inbox behind every endpoint: what is acknowledged is committed, concurrent
// deliveries share commits, lost jobs are swept up, failures are retried, and a delivery
// that keeps failing is kept as dead.

const BOT_TOKEN = `inbox-test-${randomBytes(8).toString('hex')}`;

let service: TestService;
let channelId: string;
let seq = 10_000;

test.before(async () => {
  const started = await startWithOwner();
  service = started.service;
  ({ channelId } = await started.caller.channels.create({ platform: 'messengertwo', name: 'Inbox', botToken: BOT_TOKEN }));
});

test.after(async () => {
  await service?.close();
});

function message(text: string, token = viberToken(seq++)) {
  return { token, payload: viberMessage(token, { id: 'U-inbox', name: 'I' }, text) };
}

const deliver = (payload: string) => post(service, `/messengertwo/bot/${channelId}`, payload, viberHeaders(payload, BOT_TOKEN));

async function row(externalId: string) {
  const [found] = await service.deps.db.query<{ id: string; state: string; attempts: number; last_error: string | null; payload: Buffer }>(
    `SELECT id, state, attempts, last_error, payload FROM webhook_inbox WHERE provider = 'messengertwo' AND scope = $1 AND external_id = $2`,
    [channelId, externalId],
  );
  return found;
}

const storedTexts = async (text: string) =>
  (await service.deps.db.query(`SELECT 1 FROM channel_messages WHERE channel_id = $1 AND text = $2`, [channelId, text])).length;

test('an acknowledged delivery is already committed, byte for byte', async () => {
  const { token, payload } = message('committed before the answer');
  const res = await deliver(payload);
  assert.is(res.status, 200);
  const kept = await row(token);
  assert.ok(kept, 'row exists the moment the 200 arrives');
  assert.is(kept.payload.toString('utf8'), payload);
});

test('a burst of concurrent deliveries is stored and applied exactly once each', async () => {
  const burst = Array.from({ length: 300 }, (_, i) => message(`burst ${i}`));
  const duplicate = message('burst duplicate');
  const answers = await Promise.all([...burst.map((m) => deliver(m.payload)), ...Array.from({ length: 20 }, () => deliver(duplicate.payload))]);
  assert.ok(answers.every((a) => a.status === 200), 'all acknowledged');
  await eventually('all 301 stored', async () => {
    const [{ n }] = await service.deps.db.query<{ n: string }>(`SELECT count(*) AS n FROM channel_messages WHERE channel_id = $1 AND text LIKE 'burst %'`, [channelId]);
    return Number(n) === 301;
  });
  const [{ n }] = await service.deps.db.query<{ n: string }>(
    `SELECT count(*) AS n FROM webhook_inbox WHERE scope = $1 AND external_id = ANY($2)`,
    [channelId, [...burst.map((m) => m.token), duplicate.token]],
  );
  assert.is(Number(n), 301);
});

test('the writer groups deliveries that arrive while a commit is running', async () => {
  let commits = 0;
  const db = service.deps.db;
  // Each group is one INSERT statement, committed on its own: count the statements.
  const counting = { ...db, embedded: db.embedded, query: ((...args: Parameters<typeof db.query>) => (commits++, db.query(...args))) as typeof db.query };
  const inboxKept = createSignal();
  let rung = 0;
  inboxKept.listen(() => rung++);
  const writer = createInboxWriter({ db: counting, clock: service.clock, inboxKept });
  const deliveries = Array.from({ length: 200 }, (_, i) => ({
    provider: 'messengertwo' as const,
    scope: channelId,
    externalId: `grouped-${randomUUID()}-${i}`,
    // Lengths that differ, and characters of two to four bytes: each row must get its own bytes.
    payload: Buffer.from(message(`grouped ${i} ${'ü€😀'.repeat(i % 7)}`).payload),
  }));
  const results = await Promise.all([...deliveries, deliveries[0]].map((d) => writer.write(d)));
  assert.is(results.filter((r) => !r.duplicate).length, 200);
  assert.ok(commits >= 1 && commits < 20, `200 deliveries in ${commits} commits`);
  const kept = await db.query<{ external_id: string; payload: Buffer }>(
    `SELECT external_id, payload FROM webhook_inbox WHERE provider = 'messengertwo' AND external_id = ANY($1)`,
    [deliveries.map((d) => d.externalId)],
  );
  const keptBytes = new Map(kept.map((row) => [row.external_id, row.payload]));
  assert.ok(
    deliveries.every((d) => keptBytes.get(d.externalId)?.equals(d.payload)),
    'every row holds its own delivery, byte for byte',
  );
  assert.ok(rung >= 1 && rung <= commits, `inboxKept rung ${rung} times for ${commits} commits`);
  // A commit of nothing new (a provider's retry) wakes no dispatcher.
  const before = rung;
  assert.equal(await writer.write(deliveries[1]), { duplicate: true });
  assert.is(rung, before);
  // The service's dispatcher finds the rows this writer kept and applies them. Left running,
  // they were applied during the next tests, and failed for as long as one of them had hidden
  // the messages table: 150 failures, each retried, ahead of that test's own delivery.
  await eventually('the grouped deliveries applied', async () => {
    const [{ n }] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM channel_messages WHERE channel_id = $1 AND text LIKE 'grouped %'`, [channelId]);
    return Number(n) === 200;
  });
});

test('a row the database refuses fails its own delivery only: the others in its commit are kept', async () => {
  const writer = createInboxWriter({ db: service.deps.db, clock: service.clock, inboxKept: createSignal() });
  const delivery = (externalId: string, i: number) => ({
    provider: 'messengertwo' as const,
    scope: channelId,
    externalId,
    payload: Buffer.from(message(`split ${i}`).payload),
  });
  const fine = Array.from({ length: 30 }, (_, i) => delivery(`split-${randomUUID()}`, i));
  // Past what intake lets through (webhooks.payment.http.test.ts): a NUL, and a key too long to index.
  const refused = [delivery('split-nul\u0000', 30), delivery(`split-${'x'.repeat(300_000)}`, 31)];
  const all = [...fine.slice(0, 10), refused[0], ...fine.slice(10, 20), refused[1], ...fine.slice(20)];
  const results = await Promise.allSettled(all.map((d) => writer.write(d)));
  const outcome = (d: (typeof all)[number]) => results[all.indexOf(d)];
  assert.ok(fine.every((d) => outcome(d).status === 'fulfilled'), JSON.stringify(results.map((r) => r.status)));
  assert.ok(refused.every((d) => outcome(d).status === 'rejected'));
  const kept = await service.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_inbox WHERE provider = 'messengertwo' AND external_id = ANY($1)`, [fine.map((d) => d.externalId)]);
  assert.is(kept[0].n, fine.length);
  await eventually('the split deliveries applied', async () => {
    const [{ n }] = await service.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM channel_messages WHERE channel_id = $1 AND text LIKE 'split %'`, [channelId]);
    return n === fine.length;
  });
});

test('an entry whose job was lost is picked up by the sweeper', async () => {
  const { token, payload } = message('swept up');
  const id = randomUUID();
  // As if the job had been deleted after it was dispatched: a dispatched row with no job.
  await service.deps.db.query(
    `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at, enqueued_at) VALUES ($1, 'messengertwo', $2, $3, $4, $5, $5)`,
    [id, channelId, token, Buffer.from(payload), service.clock.now()],
  );
  assert.is(await sweepInbox(service.deps), 0, 'a fresh entry is left to its job');
  service.clock.advance(11_000);
  try {
    assert.ok((await sweepInbox(service.deps)) >= 1);
  } finally {
    service.clock.set(new Date());
  }
  await eventually('the swept entry processed', async () => (await row(token))?.state === 'processed');
  assert.is(await storedTexts('swept up'), 1);
  // Sweeping again finds nothing to do and changes nothing.
  service.clock.advance(11_000);
  try {
    await sweepInbox(service.deps);
  } finally {
    service.clock.set(new Date());
  }
  assert.is(await storedTexts('swept up'), 1);
});

async function withMessagesTableGone<T>(work: () => Promise<T>): Promise<T> {
  await service.deps.db.query('ALTER TABLE channel_messages RENAME TO channel_messages_away');
  try {
    return await work();
  } finally {
    await service.deps.db.query('ALTER TABLE channel_messages_away RENAME TO channel_messages');
  }
}

test('a failing effect is recorded, retried with backoff, and applied once when it can be', async () => {
  const { token, payload } = message('retried into place');
  await withMessagesTableGone(async () => {
    assert.is((await deliver(payload)).status, 200, 'the delivery is accepted even though its effect fails');
    await eventually('the first failure recorded', async () => (await row(token))?.attempts >= 1);
  });
  const failed = await row(token);
  assert.is(failed.state, 'received');
  assert.match(failed.last_error ?? '', /channel_messages/);
  const done = await eventually('the entry processed after a retry', async () => {
    const current = await row(token);
    return current?.state === 'processed' ? current : undefined;
  });
  assert.ok(done.attempts >= 2);
  assert.is(await storedTexts('retried into place'), 1);
});

test('a delivery that uses up its retries is kept as dead, not dropped', async () => {
  const { token, payload } = message('never applied');
  const id = randomUUID();
  await withMessagesTableGone(async () => {
    await service.deps.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at, enqueued_at) VALUES ($1, 'messengertwo', $2, $3, $4, $5, $5)`,
        [id, channelId, token, Buffer.from(payload), service.clock.now()],
      );
      // No retries left: the first failure goes to the dead-letter queue.
      await service.deps.queue.insert([{ id, name: QUEUES.webhook, data: { inboxId: id }, retryLimit: 0 }], { db: { executeSql: tx.executeSql } });
    });
    await eventually('the entry dead', async () => (await row(token))?.state === 'dead');
  });
  const dead = await row(token);
  assert.is(dead.id, id);
  assert.is(dead.payload.toString('utf8'), payload);
  assert.match(dead.last_error ?? '', /channel_messages/);
  assert.is(await storedTexts('never applied'), 0);
  // A provider retry of a dead delivery is still answered like the first, with no new row.
  assert.is((await deliver(payload)).status, 200);
  assert.is((await row(token)).state, 'dead');
});

/** pg-boss's jobs for an inbox row, and whether each was due later than it was made. */
async function jobsOf(id: string) {
  return service.deps.db.query<{ state: string; delayed: boolean }>(
    `SELECT state, start_after >= created_on + interval '1 second' AS delayed FROM pgboss.job WHERE name = $1 AND data->>'inboxId' = $2`,
    [QUEUES.webhook, id],
  );
}

const enqueuedAt = async (id: string) =>
  (await service.deps.db.query<{ enqueued_at: Date | null }>('SELECT enqueued_at FROM webhook_inbox WHERE id = $1', [id]))[0].enqueued_at;

test('a kept delivery is applied straight from the inbox: no job is made for it', async () => {
  const { token, payload } = message('applied from the inbox');
  const id = randomUUID();
  // Kept as another process would keep it, with no commit of this one to announce it.
  await service.deps.db.query(
    `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at) VALUES ($1, 'messengertwo', $2, $3, $4, $5)`,
    [id, channelId, token, Buffer.from(payload), service.clock.now()],
  );
  const done = await eventually('the entry processed', async () => {
    const current = await row(token);
    return current?.state === 'processed' ? current : undefined;
  });
  assert.is(done.attempts, 1);
  assert.is(await storedTexts('applied from the inbox'), 1);
  assert.equal(await jobsOf(id), [], 'no job was made');
  assert.is(await enqueuedAt(id), null, 'the row was never handed to the queue');
});

test('of a chunk taken from the inbox, the entries that apply are applied and only the failing one goes to the queue, due after the retry delay', async () => {
  const good = [message('chunk one'), message('chunk two')];
  const bad = { id: randomUUID(), externalId: randomUUID() };
  const ids = good.map(() => randomUUID());
  // One commit: the lanes see the three at once and take them in one transaction, which the
  // unparseable billing payload makes fail.
  await service.deps.db.transaction(async (tx) => {
    const keep = (id: string, provider: string, scope: string, externalId: string, payload: string) =>
      tx.query(`INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at) VALUES ($1, $2, $3, $4, $5, $6)`, [
        id, provider, scope, externalId, Buffer.from(payload), service.clock.now(),
      ]);
    await keep(ids[0], 'messengertwo', channelId, good[0].token, good[0].payload);
    await keep(bad.id, 'billing', '', bad.externalId, 'not json');
    await keep(ids[1], 'messengertwo', channelId, good[1].token, good[1].payload);
  });
  try {
    // The chunk's fallback takes its entries one by one, in order: the second good one is
    // applied after the failing one has been handed to the queue, so wait for all three.
    const failed = await eventually('the failing entry handed to the queue, and the others applied', async () => {
      const [current] = await service.deps.db.query<{ state: string; attempts: number; last_error: string | null; enqueued_at: Date | null }>(
        'SELECT state, attempts, last_error, enqueued_at FROM webhook_inbox WHERE id = $1',
        [bad.id],
      );
      const waiting = await service.deps.db.query(`SELECT 1 FROM webhook_inbox WHERE id = ANY($1::uuid[]) AND state = 'received'`, [ids]);
      return current.enqueued_at && waiting.length === 0 ? current : undefined;
    });
    assert.is(failed.state, 'received');
    assert.is(failed.attempts, 1, 'its own attempt is counted, the chunk\'s is not');
    assert.match(failed.last_error ?? '', /JSON/);
    assert.equal(await jobsOf(bad.id), [{ state: 'created', delayed: true }]);
    for (const [i, { token }] of good.entries()) {
      assert.is((await row(token)).state, 'processed');
      assert.equal(await jobsOf(ids[i]), []);
      assert.is(await enqueuedAt(ids[i]), null);
    }
    assert.is(await storedTexts('chunk one'), 1);
    assert.is(await storedTexts('chunk two'), 1);
  } finally {
    // Its retries would keep it waiting for a while: gone, its next try finds nothing to do.
    await service.deps.db.query('DELETE FROM webhook_inbox WHERE id = $1', [bad.id]);
  }
});

test.run();
