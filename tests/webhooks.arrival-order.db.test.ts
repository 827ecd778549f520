import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { LanePolicy } from '../server/src/roles/worker-lanes.ts';
import { applyWaiting } from '../server/src/webhooks/inbox/dispatcher.ts';
import { createInboxWriter } from '../server/src/webhooks/inbox/writer.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { callerFor, createAccount, telegramUpdate, withEventEndpoint } from './helpers/webhook-fixtures.ts';

// A channel's visitor messages take effect in the order they arrived: the conversation and
// its message.received events read in it, whatever lanes the worker runs. The gateway here
// has no worker: the test keeps a burst the way intake does and applies it as the worker's
// dispatcher does, at its widest (four lanes), with chunks small enough that a burst spans many.

let service: TestService;

test.before(async () => {
  service = await startTestService({}, { role: 'gateway' });
});

test.after(async () => {
  await service?.close();
});

const BOT_TOKEN = `7000000003:${randomBytes(18).toString('base64url')}`;

const fourLanesOfThree: LanePolicy = { arrived() {}, fetched() {}, lanes: () => 4, perTransaction: () => 3 };

test('a burst of two channels\' messages, kept in one go, is stored and evented in the order it arrived, in four lanes', async () => {
  await withEventEndpoint(service, ['message.received'], async () => {
    const channels: Array<{ channelId: string; accountId: number }> = [];
    for (const name of ['one', 'two']) {
      const owner = await createAccount(service, name);
      const { channelId } = await callerFor(service, owner).channels.create({ platform: 'messengerone', name, botToken: BOT_TOKEN });
      channels.push({ channelId, accountId: owner.id });
    }
    // The two channels interleaved, each update_id lower than the one before: a group commit
    // lays its rows in the table in the order of their unique key, here against their arrival.
    const burst = Array.from({ length: 24 }, (_, i) => ({ channel: channels[i % 2], text: `message ${i}`, updateId: 900_000 - i }));
    const writer = createInboxWriter(service.deps);
    const kept = await Promise.all(
      burst.map(({ channel, text, updateId }) =>
        writer.write({ provider: 'messengerone', scope: channel.channelId, externalId: String(updateId), payload: Buffer.from(JSON.stringify(telegramUpdate(updateId, 4242, text))) }),
      ),
    );
    assert.ok(kept.every((result) => !result.duplicate));

    await applyWaiting(service.deps, fourLanesOfThree);

    const db = service.deps.db;
    const [{ waiting }] = await db.query<{ waiting: number }>(`SELECT count(*)::int AS waiting FROM webhook_inbox WHERE state = 'received'`);
    assert.is(waiting, 0, 'every message applied');
    for (const { channelId, accountId } of channels) {
      const arrived = burst.filter(({ channel }) => channel.channelId === channelId).map(({ text }) => text);
      const stored = await db.query<{ text: string }>('SELECT text FROM channel_messages WHERE channel_id = $1 ORDER BY created_at, id', [channelId]);
      assert.equal(stored.map((row) => row.text), arrived, 'the conversation reads in the order the messages arrived');
      const events = await db.query<{ body: string }>(
        'SELECT e.body FROM event_deliveries d JOIN events e ON e.id = d.event_id WHERE d.account_id = $1 ORDER BY d.seq',
        [accountId],
      );
      assert.equal(events.map((row) => JSON.parse(row.body).data.text), arrived, 'and so do its message.received events');
    }
  });
});

test.run();
