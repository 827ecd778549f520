import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { LanePolicy } from '../server/src/lib/lanes.ts';
import { QUEUES } from '../server/src/jobs.ts';
import { applyWebhookJobs } from '../server/src/roles/worker.ts';
import { applyWaiting } from '../server/src/webhooks/inbox/dispatcher.ts';
import { createInboxWriter } from '../server/src/webhooks/inbox/writer.ts';
import { startTestApp, type TestService } from './helpers/service.ts';
import { callerFor, createAccount, telegramUpdate, withEventEndpoint } from './helpers/webhook-fixtures.ts';

// A channel's visitor messages take effect in the order they arrived: the conversation and
// its message.received events read in it, whatever lanes the worker runs. The gateway here
// has no worker: the test keeps a burst the way intake does and applies it as the worker's
// dispatcher (or its queue's jobs) would, at its widest (four lanes), with chunks small
// enough that a burst spans many.

let service: TestService;

test.before(async () => {
  service = await startTestApp({}, { role: 'gateway' });
});

test.after(async () => {
  await service?.close();
});

const BOT_TOKEN = `7000000003:${randomBytes(18).toString('base64url')}`;

const lanesOf = (lanes: number, perTransaction: number): LanePolicy => ({ arrived() {}, fetched() {}, lanes: () => lanes, perTransaction: () => perTransaction });

type Channel = { channelId: string; accountId: number };
type Sent = { channel: Channel; text: string };

/** Channels of new accounts, each account's message.received events wanted by the endpoint the test makes. */
async function channelsOfNewAccounts(count: number): Promise<Channel[]> {
  const channels: Channel[] = [];
  for (let n = 0; n < count; n++) {
    const owner = await createAccount(service, `owner${n}`);
    const { channelId } = await callerFor(service, owner).channels.create({ platform: 'messengerone', name: `channel ${n}`, botToken: BOT_TOKEN });
    channels.push({ channelId, accountId: owner.id });
  }
  return channels;
}

let nextUpdateId = 900_000;

/**
 * Keeps the messages as intake does, in this order, through the inbox's writer: at once, so
 * that most share a group commit. Each update_id is lower than the one before: a commit lays
 * its rows in the table in the order of their unique key, here against their arrival.
 */
async function keepInOrder(burst: Sent[]): Promise<void> {
  const writer = createInboxWriter(service.deps);
  const kept = await Promise.all(
    burst.map(({ channel, text }) => {
      const updateId = nextUpdateId--;
      const payload = Buffer.from(JSON.stringify(telegramUpdate(updateId, 4242, text)));
      return writer.write({ provider: 'messengerone', scope: channel.channelId, externalId: String(updateId), payload });
    }),
  );
  assert.ok(kept.every((result) => !result.duplicate));
}

const waitingOf = async (channel: Channel) =>
  (await service.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_inbox WHERE scope = $1 AND state = 'received'`, [channel.channelId]))[0].n;

/** The channel's conversation, and its account's message.received events, each as the texts in their order. */
async function readBack(channel: Channel): Promise<{ stored: string[]; evented: string[] }> {
  const db = service.deps.db;
  const stored = await db.query<{ text: string }>('SELECT text FROM channel_messages WHERE channel_id = $1 ORDER BY created_at, id', [channel.channelId]);
  const events = await db.query<{ body: string }>('SELECT e.body FROM event_deliveries d JOIN events e ON e.id = d.event_id WHERE d.account_id = $1 ORDER BY d.seq', [
    channel.accountId,
  ]);
  return { stored: stored.map((row) => row.text), evented: events.map((row) => JSON.parse(row.body).data.text) };
}

async function assertInArrivalOrder(channel: Channel, burst: Sent[]): Promise<void> {
  const arrived = burst.filter((sent) => sent.channel === channel).map((sent) => sent.text);
  const { stored, evented } = await readBack(channel);
  assert.equal(stored, arrived, 'the conversation reads in the order the messages arrived');
  assert.equal(evented, arrived, 'and so do its message.received events');
}

const interleaved = (channels: Channel[], count: number, label: string): Sent[] =>
  Array.from({ length: count }, (_, i) => ({ channel: channels[i % channels.length], text: `${label} ${i}` }));

/**
 * Two channels' messages, interleaved, kept at once; `apply` then applies them as the worker
 * would. Every one is applied, and each conversation and its events read in arrival order.
 */
async function appliedInArrivalOrder(count: number, label: string, apply: () => Promise<unknown>): Promise<void> {
  await withEventEndpoint(service, ['message.received'], async () => {
    const channels = await channelsOfNewAccounts(2);
    const burst = interleaved(channels, count, label);
    await keepInOrder(burst);
    await apply();
    for (const channel of channels) {
      assert.is(await waitingOf(channel), 0, 'every message applied');
      await assertInArrivalOrder(channel, burst);
    }
  });
}

test('a burst of two channels\' messages, kept at once, is stored and evented in the order it arrived, in four lanes', () =>
  appliedInArrivalOrder(24, 'message', () => applyWaiting(service.deps, lanesOf(4, 3))));

test('two workers applying the same burst at once keep each channel in its order', () =>
  appliedInArrivalOrder(30, 'two workers', () => Promise.all([applyWaiting(service.deps, lanesOf(1, 3)), applyWaiting(service.deps, lanesOf(2, 2))])));

test('jobs for a burst (the sweeper\'s, a replay\'s) keep each channel in its order too, in four lanes', () =>
  appliedInArrivalOrder(24, 'by job', async () => {
    // As the sweeper hands rows to the queue: each marked, a job each with the row's id, which
    // pg-boss hands out in id order.
    const rows = await service.deps.db.query<{ id: string }>(
      `UPDATE webhook_inbox SET enqueued_at = $1 WHERE state = 'received' AND enqueued_at IS NULL RETURNING id`,
      [service.clock.now()],
    );
    const jobs = rows.map(({ id }) => id).sort().map((id) => ({ id, name: QUEUES.webhook, data: { inboxId: id }, expireInSeconds: 15 }));
    await applyWebhookJobs(service.deps, jobs, lanesOf(4, 3));
  }));

// A second connection holds the lock: the embedded database has one.
if (process.env.DATABASE_URL) {
  test('a channel whose messages another worker is applying is left to it, and applied in order after', async () => {
    await withEventEndpoint(service, ['message.received'], async () => {
      const [held, free] = await channelsOfNewAccounts(2);
      const burst = interleaved([held, free], 20, 'held back');
      await keepInOrder(burst);
      // Another worker's transaction, in the middle of applying `held`'s messages, holds its stream.
      const other = new pg.Client({ connectionString: service.env.DATABASE_URL });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`inbox-stream:messengerone:${held.channelId}`]);
        await applyWaiting(service.deps, lanesOf(4, 3));
        assert.is(await waitingOf(held), 10, 'none of the held channel applied');
        assert.is(await waitingOf(free), 0, 'the other channel applied beside it');
      } finally {
        await other.query('ROLLBACK').catch(() => undefined);
        await other.end();
      }
      await applyWaiting(service.deps, lanesOf(4, 3));
      assert.is(await waitingOf(held), 0);
      await assertInArrivalOrder(held, burst);
      await assertInArrivalOrder(free, burst);
    });
  });
}

test.run();
