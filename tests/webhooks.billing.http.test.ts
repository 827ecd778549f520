import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';
import {
  applyChunksCrossed,
  callerFor,
  createAccount,
  inboxRows,
  keptNotDispatched,
  paddleEvent,
  paddleHeaders,
  post,
  settledDelivery,
  startWithOwner,
  unixNow,
  type TestAccount,
} from './helpers/webhook-fixtures.ts';

// Paddle Billing deliveries to POST /billingprovider/webhook; BILLING_WEBHOOK_SECRET holds
// two secrets, as during a rotation.

const CURRENT = `pdl_ntfset_${randomBytes(16).toString('hex')}`;
const PREVIOUS = `pdl_ntfset_${randomBytes(16).toString('hex')}`;
const PATH = '/billingprovider/webhook';

let service: TestService;
let customer: TestAccount;

test.before(async () => {
  ({ service, owner: customer } = await startWithOwner(
    { BILLING_WEBHOOK_SECRET: `${CURRENT}, ${PREVIOUS}`, BILLING_PLANS: 'pri_01pro=pro,pri_01team=team' },
    'customer',
  ));
});

test.after(async () => {
  await service?.close();
});

function subscription(status: string, options: { account?: TestAccount; accountId?: unknown; priceId?: string; id?: string } = {}) {
  return {
    id: options.id ?? `sub_01${randomBytes(10).toString('hex')}`,
    status,
    customer_id: 'ctm_01h8441jn5pcwrfhwh78jqt8hk',
    currency_code: 'EUR',
    items: [{ status: 'active', quantity: 1, price: { id: options.priceId ?? 'pri_01pro', product_id: 'pro_01', unit_price: { amount: '1500', currency_code: 'EUR' } } }],
    custom_data: { account_id: 'accountId' in options ? options.accountId : String((options.account ?? customer).id) },
  };
}

function deliver(event: object, options: { secret?: string; timestamp?: number } = {}) {
  const payload = JSON.stringify(event);
  return post(service, PATH, payload, paddleHeaders(payload, options.secret ?? CURRENT, options.timestamp ?? unixNow(service)));
}

const plan = async (account = customer) => (await callerFor(service, account).auth.me()).user.plan;

/** /me answers from a cache that the worker's commit evicts by NOTIFY a moment later. */
const expectPlan = (account: TestAccount, expected: string) =>
  eventually(`plan ${expected} for ${account.email}`, async () => (await plan(account)) === expected);

const settled = (eventId: string) => settledDelivery(service, 'billing', eventId);


/** Delivers a subscription event at `at` and waits until the worker has settled it. */
async function apply(eventType: string, at: number, data: ReturnType<typeof subscription>) {
  const event = paddleEvent({ eventType, occurredAt: new Date(at), data });
  assert.is((await deliver(event)).status, 200);
  return settled(event.event_id);
}

test('subscription.activated sets the plan mapped from the first price', async () => {
  const event = paddleEvent({ eventType: 'subscription.activated', occurredAt: new Date(), data: subscription('active') });
  const res = await deliver(event);
  assert.is(res.status, 200);
  assert.equal(res.body, { ok: true });
  await eventually('the plan pro', async () => (await plan()) === 'pro');
});

test('a subscription ends: canceled or paused puts an account without another one back on free', async () => {
  const account = await createAccount(service, 'ending');
  const sub = subscription('active', { account, priceId: 'pri_01team' });
  const start = Date.now();
  await apply('subscription.created', start, sub);
  await expectPlan(account, 'team');
  await apply('subscription.paused', start + 1000, { ...sub, status: 'paused' });
  await expectPlan(account, 'free');
  await apply('subscription.resumed', start + 2000, { ...sub, status: 'active' });
  await expectPlan(account, 'team');
  await apply('subscription.canceled', start + 3000, { ...sub, status: 'canceled' });
  await expectPlan(account, 'free');
});

test('trialing and past_due keep the plan', async () => {
  const account = await createAccount(service, 'trial');
  const sub = subscription('trialing', { account });
  const start = Date.now();
  await apply('subscription.trialing', start, sub);
  await expectPlan(account, 'pro');
  assert.is((await apply('subscription.past_due', start + 1000, { ...sub, status: 'past_due' })).state, 'processed');
  await expectPlan(account, 'pro');
});

test('an event older than the last applied one of its subscription changes nothing', async () => {
  const account = await createAccount(service, 'ordering');
  const sub = subscription('active', { account });
  const start = Date.now();
  assert.is((await apply('subscription.canceled', start + 5000, { ...sub, status: 'canceled' })).state, 'processed');
  const row = await apply('subscription.activated', start, sub);
  assert.is(row.state, 'ignored');
  assert.match(row.reason ?? '', /older/);
  await expectPlan(account, 'free');
});

test('attack: cancelling a second subscription that names a victim leaves the victim on their own live plan', async () => {
  const victim = await createAccount(service, 'victim');
  const start = Date.now();
  await apply('subscription.activated', start, subscription('active', { account: victim, priceId: 'pri_01pro' }));
  await expectPlan(victim, 'pro');
  // The attacker's own checkout, with the victim's account id in custom_data.
  const planted = subscription('active', { account: victim, priceId: 'pri_01team' });
  await apply('subscription.activated', start + 1000, planted);
  await expectPlan(victim, 'team');
  await apply('subscription.canceled', start + 2000, { ...planted, status: 'canceled' });
  await expectPlan(victim, 'pro');
});

test('the plan is the highest-ranked of the live subscriptions (last in BILLING_PLANS ranks highest), free when none is live', async () => {
  const account = await createAccount(service, 'ranked');
  const start = Date.now();
  const team = subscription('active', { account, priceId: 'pri_01team' });
  const pro = subscription('trialing', { account, priceId: 'pri_01pro' });
  await apply('subscription.activated', start, team);
  await apply('subscription.trialing', start, pro);
  await expectPlan(account, 'team');
  await apply('subscription.paused', start + 1000, { ...team, status: 'paused' });
  await expectPlan(account, 'pro');
  await apply('subscription.resumed', start + 2000, team);
  await expectPlan(account, 'team');
  await apply('subscription.canceled', start + 3000, { ...team, status: 'canceled' });
  await apply('subscription.canceled', start + 3000, { ...pro, status: 'canceled' });
  await expectPlan(account, 'free');
  const rows = await service.deps.db.query<{ status: string }>(
    'SELECT status FROM billing_subscriptions WHERE subscription_id = ANY($1) ORDER BY status',
    [[team.id, pro.id]],
  );
  assert.equal(rows.map((row) => row.status), ['canceled', 'canceled']);
});

test('a subscription that moves to another account no longer counts for the first one', async () => {
  const first = await createAccount(service, 'first');
  const second = await createAccount(service, 'second');
  const start = Date.now();
  const sub = subscription('active', { account: first, priceId: 'pri_01team' });
  await apply('subscription.activated', start, sub);
  await expectPlan(first, 'team');
  await apply('subscription.updated', start + 1000, { ...sub, custom_data: { account_id: String(second.id) } });
  await expectPlan(second, 'team');
  await expectPlan(first, 'free');
});

test('unknown accounts, prices and event types are kept as ignored, not retried', async () => {
  const cases = [
    paddleEvent({ eventType: 'subscription.activated', occurredAt: new Date(), data: subscription('active', { accountId: '99999999' }) }),
    paddleEvent({ eventType: 'subscription.activated', occurredAt: new Date(), data: subscription('active', { accountId: undefined }) }),
    paddleEvent({ eventType: 'subscription.activated', occurredAt: new Date(), data: subscription('active', { priceId: 'pri_01unknown' }) }),
    paddleEvent({ eventType: 'transaction.completed', occurredAt: new Date(), data: { id: 'txn_01', status: 'completed' } }),
  ];
  for (const event of cases) assert.is((await deliver(event)).status, 200);
  const reasons = [];
  for (const event of cases) {
    const row = await settled(event.event_id);
    assert.is(row.state, 'ignored');
    reasons.push(row.reason);
  }
  assert.match(reasons[0] ?? '', /unknown account/);
  assert.match(reasons[1] ?? '', /account_id/);
  assert.match(reasons[2] ?? '', /unknown price/);
  assert.match(reasons[3] ?? '', /transaction\.completed/);
  const attempts = await service.deps.db.query<{ attempts: number }>(
    `SELECT attempts FROM webhook_inbox WHERE external_id = ANY($1)`,
    [cases.map((c) => c.event_id)],
  );
  assert.equal(attempts.map((row) => row.attempts), [1, 1, 1, 1]);
});

test('the previous secret still verifies during a rotation', async () => {
  const event = paddleEvent({ eventType: 'transaction.created', occurredAt: new Date(), data: { id: 'txn_02' } });
  assert.is((await deliver(event, { secret: PREVIOUS })).status, 200);
});

test('a repeated event_id is answered 200 and kept once', async () => {
  const event = paddleEvent({ eventType: 'subscription.updated', occurredAt: new Date(), data: subscription('active') });
  const answers = await Promise.all([deliver(event), deliver(event)]);
  assert.equal(answers.map((a) => a.status), [200, 200]);
  assert.is((await deliver(event)).status, 200);
  const rows = await service.deps.db.query(`SELECT 1 FROM webhook_inbox WHERE provider = 'billing' AND external_id = $1`, [event.event_id]);
  assert.is(rows.length, 1);
});

test('forged, missing, stale: 401 and nothing kept', async () => {
  const event = paddleEvent({ eventType: 'subscription.activated', occurredAt: new Date(), data: subscription('active', { priceId: 'pri_01team' }) });
  const payload = JSON.stringify(event);
  assert.is((await deliver(event, { secret: 'pdl_ntfset_attacker' })).status, 401);
  assert.is((await post(service, PATH, payload, { 'content-type': 'application/json' })).status, 401);
  assert.is((await deliver(event, { timestamp: unixNow(service) - 301 })).status, 401);
  assert.is((await deliver(event, { timestamp: unixNow(service) + 301 })).status, 401);
  const res = await post(service, PATH, payload, { 'paddle-signature': 'ts=abc;h1=zz' });
  assert.is(res.status, 401);
  assert.is(res.body.code, 'INVALID_SIGNATURE');
  assert.equal(await inboxRows(service, 'billing', event.event_id), []);
});

test('malformed JSON with a valid signature is 400; an oversized body is 413', async () => {
  const broken = '{"event_id":"evt_01broken","event_type":';
  const res = await post(service, PATH, broken, paddleHeaders(broken, CURRENT, unixNow(service)));
  assert.is(res.status, 400);
  assert.is(res.body.code, 'INVALID_PAYLOAD');
  const noOccurredAt = JSON.stringify({ event_id: 'evt_01x', event_type: 'subscription.updated', data: {} });
  assert.is((await post(service, PATH, noOccurredAt, paddleHeaders(noOccurredAt, CURRENT, unixNow(service)))).status, 400);
  const big = Buffer.alloc(1024 * 1024 + 1, 0x61);
  const tooBig = await post(service, PATH, big, paddleHeaders(big, CURRENT, unixNow(service)));
  assert.is(tooBig.status, 413);
  const garbage = await post(service, PATH, randomBytes(512), paddleHeaders(randomBytes(512), CURRENT, unixNow(service)));
  assert.is(garbage.status, 401);
});

test('secrets never reach the logs', async () => {
  assert.not.match(service.logs.text(), CURRENT);
  assert.not.match(service.logs.text(), PREVIOUS);
});

// Two transactions at once: the embedded database has one connection, so only a server can race them.
if (process.env.DATABASE_URL) {
  test('two worker chunks with subscriptions of the same two accounts in opposite orders wait for each other instead of deadlocking', async () => {
    const [x, y] = [await createAccount(service, 'x'), await createAccount(service, 'y')];
    const kept = async (account: TestAccount) =>
      keptNotDispatched(service, 'billing', '', JSON.stringify(paddleEvent({ eventType: 'subscription.activated', occurredAt: new Date(), data: subscription('active', { account }) })));
    const first = [await kept(x), await kept(y)];
    const second = [await kept(y), await kept(x)];
    // Locking accounts as it goes, the second chunk would hold y and wait for x, which the
    // first holds while it waits for y: PostgreSQL would end one of them.
    const hold = { sql: 'SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', params: [y.id] };
    assert.equal(await applyChunksCrossed(service, hold, first, second), ['applied', 'applied']);
    const states = await service.deps.db.query<{ state: string }>('SELECT state FROM webhook_inbox WHERE id = ANY($1::uuid[])', [[...first, ...second]]);
    assert.equal(states.map((row) => row.state), ['processed', 'processed', 'processed', 'processed']);
    await expectPlan(x, 'pro');
    await expectPlan(y, 'pro');
  });

  test('a lone event moving a subscription beside a chunk with that subscription waits instead of deadlocking', async () => {
    // Made first, so `from` sorts before `to`: a chunk locks `from` first.
    const from = await createAccount(service, 'move-from');
    const to = await createAccount(service, 'move-to');
    const start = Date.now();
    const moving = subscription('active', { account: from });
    await apply('subscription.activated', start, moving);
    const kept = (at: number, data: ReturnType<typeof subscription>) =>
      keptNotDispatched(service, 'billing', '', JSON.stringify(paddleEvent({ eventType: 'subscription.updated', occurredAt: new Date(at), data })));
    const lone = [await kept(start + 2000, { ...moving, custom_data: { account_id: String(to.id) } })];
    const chunk = [await kept(start + 1000, moving), await kept(start + 1000, subscription('active', { account: from, priceId: 'pri_01team' }))];
    // The chunk waits for `from`'s row, then the lone event starts. Taking its locks as it
    // went, it would hold `to` and the subscription's named lock and wait for `from`, which
    // the chunk would then hold while it waits for that named lock.
    const hold = { sql: 'SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', params: [from.id] };
    assert.equal(await applyChunksCrossed(service, hold, lone, chunk), ['applied', 'applied']);
    const states = await service.deps.db.query<{ state: string }>('SELECT state FROM webhook_inbox WHERE id = ANY($1::uuid[])', [[...lone, ...chunk]]);
    assert.equal(states.map((row) => row.state), ['processed', 'processed', 'processed']);
    await expectPlan(to, 'pro');
    await expectPlan(from, 'team');
  });
}

test.run();
