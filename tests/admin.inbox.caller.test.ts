import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runHousekeeping } from '../server/src/roles/housekeeping.ts';
import { assertError, issuePaths, registerAndVerify, startWithAdmin, type Account, type WithAdmin } from './helpers/auth.ts';
import { answerOf, callerOf } from './helpers/caller.ts';
import type { TestService } from './helpers/service.ts';
import { callerFor, insertDelivery, paddleEvent, paddleHeaders, post, unixNow, viberHeaders, viberMessage, viberToken } from './helpers/webhook-fixtures.ts';
import { eventually } from './helpers/wait.ts';

// The operator's webhook inbox (docs/API.md, Operator API): the rules of admin.inboxStats,
// admin.listInbox, admin.showDelivery, admin.replayDelivery and admin.replayDeliveries, called in
// process, and replays through the same exactly-once path as a first delivery (which comes in
// over HTTP, as its provider sends it). What HTTP adds (refusals to non-admins, a list's query
// string, a tRPC call with no input) is tested over REST in tests/admin.inbox.rest.test.ts.

const BILLING_SECRET = 'pdl_ntfset_admin_tests_secret_0123';
const DAY = 24 * 3600_000;

const test = suite<WithAdmin>('admin.* on the webhook inbox: stats, lists, one delivery, replays, retention');

test.before(async (context) => {
  Object.assign(context, await startWithAdmin({ BILLING_WEBHOOK_SECRET: BILLING_SECRET, BILLING_PLANS: 'pri_pro=pro,pri_team=team', INBOX_RETENTION_DAYS: '30' }));
});
test.after(async ({ service }) => {
  await service?.close();
});

/** The admin procedures as `admin`; any input, as a client that ignores the types would send it, answered as REST would. */
const ops = (service: TestService, admin: Account) => callerOf(service, { bearer: admin.token }).admin;
const inboxStats = (service: TestService, admin: Account) => answerOf(ops(service, admin).inboxStats());
const list = (service: TestService, admin: Account, filter: unknown) => answerOf(ops(service, admin).listInbox(filter as never));
const show = (service: TestService, admin: Account, id: string) => answerOf(ops(service, admin).showDelivery({ id }));
const replay = (service: TestService, admin: Account, id: string) => answerOf(ops(service, admin).replayDelivery({ id }));
const replayAll = (service: TestService, admin: Account, filter?: unknown) => answerOf(ops(service, admin).replayDeliveries(filter as never));

async function stateOf(service: TestService, id: string) {
  const [row] = await service.deps.db.query<{ state: string; reason: string | null }>('SELECT state, reason FROM webhook_inbox WHERE id = $1', [id]);
  return row;
}

const settled = (service: TestService, id: string) =>
  eventually(`delivery ${id} settled`, async () => {
    const row = await stateOf(service, id);
    return row && row.state !== 'received' ? row : undefined;
  });

test('stats: every provider, its deliveries by state, and the age of its oldest waiting one on the service clock', async ({ service, admin }) => {
  // Counted as what this test adds: other tests keep deliveries of their own.
  const operatorOf = (answer: { body: any }) => answer.body.providers.find((p: { provider: string }) => p.provider === 'operator');
  const before = operatorOf(await inboxStats(service, admin));
  await insertDelivery(service, { provider: 'operator', payload: '{}', state: 'received', ageMs: 90_000 });
  await insertDelivery(service, { provider: 'operator', payload: '{}', state: 'dead' });
  await insertDelivery(service, { provider: 'operator', payload: '{}', state: 'dead' });
  await insertDelivery(service, { provider: 'operator', payload: '{}', state: 'ignored' });
  const stats = await inboxStats(service, admin);
  assert.is(stats.status, 200);
  assert.equal(stats.body.providers.map((p: { provider: string }) => p.provider), ['billing', 'payment', 'operator', 'messengerone', 'messengertwo']);
  const operator = operatorOf(stats);
  const added = Object.fromEntries((['received', 'processed', 'ignored', 'dead'] as const).map((state) => [state, Number(operator[state]) - Number(before[state])]));
  assert.equal(added, { received: 1, processed: 0, ignored: 1, dead: 2 });
  assert.is(operator.oldest_pending_seconds, 90);
  for (const provider of stats.body.providers) assert.equal(Object.keys(provider).sort(), ['dead', 'ignored', 'oldest_pending_seconds', 'processed', 'provider', 'received']);
  await service.deps.db.query(`DELETE FROM webhook_inbox WHERE provider = 'operator'`);
});

test('the list: newest first, filtered by provider, state and time, paged by an opaque cursor until next_cursor is null', async ({ service, admin }) => {
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push(await insertDelivery(service, { provider: 'messengerone', scope: 'c1', payload: `{"n":${i}}`, state: i % 2 ? 'dead' : 'processed', ageMs: (10 - i) * 60_000 }));
  const first = await list(service, admin, { provider: 'messengerone', limit: 3 });
  assert.is(first.status, 200);
  assert.equal(first.body.items.map((item: { id: string }) => item.id), [ids[6], ids[5], ids[4]]);
  assert.equal(Object.keys(first.body.items[0]).sort(), ['attempts', 'external_id', 'id', 'last_error', 'processed_at', 'provider', 'reason', 'received_at', 'scope', 'state']);
  const second = await list(service, admin, { provider: 'messengerone', limit: 3, cursor: first.body.next_cursor });
  const third = await list(service, admin, { provider: 'messengerone', limit: 3, cursor: second.body.next_cursor });
  assert.equal([...second.body.items, ...third.body.items].map((item: { id: string }) => item.id), [ids[3], ids[2], ids[1], ids[0]]);
  assert.is(third.body.next_cursor, null);

  const dead = await list(service, admin, { provider: 'messengerone', state: 'dead' });
  assert.equal(dead.body.items.map((item: { id: string }) => item.id), [ids[5], ids[3], ids[1]]);
  const since = new Date(service.clock.now().getTime() - 6 * 60_000).toISOString();
  const until = new Date(service.clock.now().getTime() - 4 * 60_000).toISOString();
  const window = await list(service, admin, { provider: 'messengerone', since, until });
  assert.equal(window.body.items.map((item: { id: string }) => item.id), [ids[5], ids[4]], 'since inclusive, until exclusive');

  for (const [filter, field] of [[{ limit: 0 }, 'limit'], [{ limit: 201 }, 'limit'], [{ limit: 2.5 }, 'limit'], [{ state: 'lost' }, 'state'], [{ provider: 'paypal' }, 'provider'], [{ since: 'yesterday' }, 'since'], [{ cursor: 'not-ours' }, 'cursor']] as const) {
    const refused = await list(service, admin, filter);
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(refused), [field], JSON.stringify(filter));
  }
  await service.deps.db.query(`DELETE FROM webhook_inbox WHERE provider = 'messengerone'`);
});

test('one delivery with its payload as received; an unknown or malformed id is 404', async ({ service, admin }) => {
  const payload = '{ "update_id": 7,\n  "note": "kept as sent, spaces and all" }';
  const id = await insertDelivery(service, { provider: 'operator', payload, state: 'ignored' });
  const shown = await show(service, admin, id);
  assert.is(shown.status, 200);
  assert.is(shown.body.delivery.payload, payload);
  assert.is(shown.body.delivery.id, id);
  assert.is(shown.body.delivery.state, 'ignored');
  assertError(await show(service, admin, randomUUID()), 404, 'NOT_FOUND');
  assertError(await show(service, admin, 'not-a-uuid'), 404, 'NOT_FOUND');
  assertError(await replay(service, admin, randomUUID()), 404, 'NOT_FOUND');
});

function billingDelivery(service: TestService, accountId: number, status: string, occurredAt: Date, subscriptionId: string) {
  const event = paddleEvent({
    eventType: `subscription.${status === 'active' ? 'activated' : 'canceled'}`,
    occurredAt,
    data: { id: subscriptionId, status, items: [{ price: { id: 'pri_pro' } }], custom_data: { account_id: String(accountId) } },
  });
  const payload = JSON.stringify(event);
  return { event, deliver: () => post(service, '/billingprovider/webhook', payload, paddleHeaders(payload, BILLING_SECRET, unixNow(service))) };
}

const inboxIdOf = async (service: TestService, externalId: string) =>
  (await service.deps.db.query<{ id: string }>(`SELECT id FROM webhook_inbox WHERE provider = 'billing' AND external_id = $1`, [externalId]))[0].id;

test('a billing event for an account that did not exist yet is ignored; replayed once the account exists, it takes effect', async ({ service, admin }) => {
  const [{ next }] = await service.deps.db.query<{ next: number }>(`SELECT last_value::int + 1 AS next FROM accounts_id_seq`);
  const early = billingDelivery(service, next, 'active', new Date(), `sub_${randomUUID()}`);
  assert.is((await early.deliver()).status, 200);
  const id = await inboxIdOf(service, early.event.event_id);
  const ignored = await settled(service, id);
  assert.equal(ignored, { state: 'ignored', reason: `unknown account ${next}` });
  // The operator sees why, before deciding to replay.
  assert.is((await show(service, admin, id)).body.delivery.reason, `unknown account ${next}`);
  const listed = await list(service, admin, { provider: 'billing', state: 'ignored' });
  assert.is(listed.body.items.find((item: { id: string }) => item.id === id)?.reason, `unknown account ${next}`);

  const late = await registerAndVerify(service, 'late.customer@example.com');
  assert.is(late.user.id, next, 'the account the event named');
  const replayed = await replay(service, admin, id);
  assert.equal(replayed.body, { success: true });
  assert.equal(await settled(service, id), { state: 'processed', reason: null });
  await eventually('the plan applied', async () => (await callerFor(service, { id: late.user.id, email: late.email, token: late.token }).auth.me()).user.plan === 'pro');
});

test('a replayed older billing event changes nothing: effects stay monotonic', async ({ service, admin }) => {
  const customer = await registerAndVerify(service, 'monotonic@example.com');
  const subscription = `sub_${randomUUID()}`;
  const start = service.clock.now().getTime();
  const older = billingDelivery(service, customer.user.id, 'active', new Date(start), subscription);
  const newer = billingDelivery(service, customer.user.id, 'canceled', new Date(start + 1000), subscription);
  await older.deliver();
  await settled(service, await inboxIdOf(service, older.event.event_id));
  await newer.deliver();
  await settled(service, await inboxIdOf(service, newer.event.event_id));
  const plan = async () => (await callerFor(service, { id: customer.user.id, email: customer.email, token: customer.token }).auth.me()).user.plan;
  await eventually('the plan free', async () => (await plan()) === 'free');

  const olderId = await inboxIdOf(service, older.event.event_id);
  assert.equal((await replay(service, admin, olderId)).body, { success: true });
  const row = await settled(service, olderId);
  assert.is(row.state, 'ignored');
  assert.match(row.reason ?? '', /older than the last applied event/);
  assert.is(await plan(), 'free');
});

/** A dead visitor message: a real, signed Viber delivery for a real channel, kept as dead. */
async function deadVisitorMessage(service: TestService, owner: Account, text: string) {
  const botToken = `viber-${randomUUID()}`;
  const { channelId } = await callerFor(service, { id: owner.user.id, email: owner.email, token: owner.token }).channels.create({ platform: 'messengertwo', name: 'Replays', botToken });
  const token = viberToken(Math.floor(Math.random() * 1e9));
  const payload = viberMessage(token, { id: 'visitor-1', name: 'V' }, text);
  const id = await insertDelivery(service, { provider: 'messengertwo', scope: channelId, payload, state: 'dead', externalId: token });
  return { id, channelId, deliver: () => post(service, `/messengertwo/bot/${channelId}`, payload, viberHeaders(payload, botToken)) };
}

const storedMessages = async (service: TestService, channelId: string) =>
  Number((await service.deps.db.query<{ n: string }>('SELECT count(*) AS n FROM channel_messages WHERE channel_id = $1', [channelId]))[0].n);

test('five replays of one dead delivery at once apply it once, with one replay recorded', async ({ service, admin, user }) => {
  const { id, channelId } = await deadVisitorMessage(service, user, 'replayed five times at once');
  const answers = await Promise.all(Array.from({ length: 5 }, () => replay(service, admin, id)));
  assert.equal(answers.map((answer) => answer.status), [200, 200, 200, 200, 200]);
  assert.is((await settled(service, id)).state, 'processed');
  assert.is(await storedMessages(service, channelId), 1);
  const [{ n }] = await service.deps.db.query<{ n: string }>(`SELECT count(*) AS n FROM audit_events WHERE event = 'admin.delivery_replayed' AND data->>'delivery' = $1`, [id]);
  assert.is(Number(n), 1);

  // A processed delivery may be replayed too: through its handler again, with no second effect.
  assert.equal((await replay(service, admin, id)).body, { success: true });
  await eventually('replayed again', async () => (await stateOf(service, id)).state === 'processed');
  assert.is(await storedMessages(service, channelId), 1);
});

test('bulk replay: dead deliveries by default, or ignored ones, by provider and time; the count comes back', async ({ service, admin, user }) => {
  const before = await service.deps.db.query<{ id: string }>(`SELECT id FROM webhook_inbox WHERE state IN ('dead', 'ignored')`);
  await service.deps.db.query(`UPDATE webhook_inbox SET state = 'processed' WHERE id = ANY($1)`, [before.map((row) => row.id)]);
  const a = await deadVisitorMessage(service, user, 'bulk a');
  const b = await deadVisitorMessage(service, user, 'bulk b');
  const old = await insertDelivery(service, { provider: 'messengertwo', scope: a.channelId, payload: '{}', state: 'dead', ageMs: 2 * DAY });
  const ignoredOne = await insertDelivery(service, { provider: 'operator', payload: '{"update_id":1}', state: 'ignored' });

  const since = new Date(service.clock.now().getTime() - DAY).toISOString();
  assert.equal((await replayAll(service, admin, { provider: 'billing' })).body, { success: true, replayed: 0 });
  assert.equal((await replayAll(service, admin, { provider: 'messengertwo', since })).body, { success: true, replayed: 2 });
  assert.is((await settled(service, a.id)).state, 'processed');
  assert.is((await settled(service, b.id)).state, 'processed');
  assert.is((await stateOf(service, old)).state, 'dead', 'outside the time range');
  assert.equal((await replayAll(service, admin, { state: 'ignored', provider: 'operator' })).body, { success: true, replayed: 1 });
  await settled(service, ignoredOne);
  assert.equal((await replayAll(service, admin)).body, { success: true, replayed: 1 }, 'the old dead one, with no filter');

  for (const [json, field] of [[{ state: 'processed' }, 'state'], [{ provider: 'nope' }, 'provider'], [{ since: 'soon' }, 'since']] as const) {
    const refused = await replayAll(service, admin, json);
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(refused), [field]);
  }
});

test('retention: processed and ignored deliveries older than INBOX_RETENTION_DAYS go; dead and waiting ones stay', async ({ service }) => {
  const keep = [
    await insertDelivery(service, { provider: 'payment', scope: 's', payload: '{}', state: 'processed', ageMs: 29 * DAY }),
    await insertDelivery(service, { provider: 'payment', scope: 's', payload: '{}', state: 'dead', ageMs: 40 * DAY }),
    await insertDelivery(service, { provider: 'payment', scope: 's', payload: '{}', state: 'received', ageMs: 40 * DAY }),
  ];
  const purge = [
    await insertDelivery(service, { provider: 'payment', scope: 's', payload: '{}', state: 'processed', ageMs: 31 * DAY }),
    await insertDelivery(service, { provider: 'payment', scope: 's', payload: '{}', state: 'ignored', ageMs: 31 * DAY }),
  ];
  const report = await runHousekeeping(service.deps);
  assert.ok(report.deliveries >= 2, `${report.deliveries} purged`);
  for (const id of purge) assert.is(await stateOf(service, id), undefined);
  for (const id of keep) assert.ok(await stateOf(service, id), `kept ${id}`);
});

test('every admin action is in the acting admin\'s activity', async ({ service, admin }) => {
  const [{ mark }] = await service.deps.db.query<{ mark: number }>('SELECT coalesce(max(id), 0)::int AS mark FROM audit_events');
  // One of each action: read the stats, the list and a delivery; replay it, then in bulk.
  const id = await insertDelivery(service, { provider: 'operator', payload: '{"update_id":2}', state: 'ignored' });
  assert.is((await inboxStats(service, admin)).status, 200);
  assert.is((await list(service, admin, { provider: 'operator' })).status, 200);
  assert.is((await show(service, admin, id)).status, 200);
  assert.equal((await replay(service, admin, id)).body, { success: true });
  await settled(service, id);
  assert.is((await replayAll(service, admin, { provider: 'billing' })).status, 200);
  const [{ events }] = await service.deps.db.query<{ events: string[] }>(
    `SELECT array_agg(DISTINCT event ORDER BY event) AS events FROM audit_events WHERE account_id = $1 AND event LIKE 'admin.%' AND id > $2`,
    [admin.user.id, mark],
  );
  assert.equal(events, ['admin.deliveries_replayed', 'admin.delivery_read', 'admin.delivery_replayed', 'admin.inbox_read']);
});

test.run();
