import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from './helpers/service.ts';
import { callerFor, createAccount, eventually, paddleEvent, paddleHeaders, post, unixNow, type TestAccount } from './helpers/webhook-fixtures.ts';

// Paddle Billing deliveries to POST /billingprovider/webhook; BILLING_WEBHOOK_SECRET holds
// two secrets, as during a rotation.

const CURRENT = `pdl_ntfset_${randomBytes(16).toString('hex')}`;
const PREVIOUS = `pdl_ntfset_${randomBytes(16).toString('hex')}`;
const PATH = '/billingprovider/webhook';

let service: TestService;
let customer: TestAccount;

test.before(async () => {
  service = await startTestService({
    BILLING_WEBHOOK_SECRET: `${CURRENT}, ${PREVIOUS}`,
    BILLING_PLANS: 'pri_01pro=pro,pri_01team=team',
  });
  customer = await createAccount(service, 'customer');
});

test.after(async () => {
  await service?.close();
});

function subscription(status: string, options: { accountId?: unknown; priceId?: string; id?: string } = {}) {
  return {
    id: options.id ?? `sub_01${randomBytes(10).toString('hex')}`,
    status,
    customer_id: 'ctm_01h8441jn5pcwrfhwh78jqt8hk',
    currency_code: 'EUR',
    items: [{ status: 'active', quantity: 1, price: { id: options.priceId ?? 'pri_01pro', product_id: 'pro_01', unit_price: { amount: '1500', currency_code: 'EUR' } } }],
    custom_data: { account_id: 'accountId' in options ? options.accountId : String(customer.id) },
  };
}

function deliver(event: object, options: { secret?: string; timestamp?: number } = {}) {
  const payload = JSON.stringify(event);
  return post(service, PATH, payload, paddleHeaders(payload, options.secret ?? CURRENT, options.timestamp ?? unixNow(service)));
}

const plan = async () => (await callerFor(service, customer).auth.me()).user.plan;

async function inboxRow(eventId: string) {
  const [row] = await service.deps.db.query<{ state: string; reason: string | null }>(
    `SELECT state, reason FROM webhook_inbox WHERE provider = 'billing' AND external_id = $1`,
    [eventId],
  );
  return row;
}

const settled = (eventId: string) =>
  eventually(async () => {
    const row = await inboxRow(eventId);
    return row && row.state !== 'received' ? row : undefined;
  }, 10_000, `event ${eventId} processed`);

test('subscription.activated sets the plan mapped from the first price', async () => {
  const event = paddleEvent({ eventType: 'subscription.activated', occurredAt: new Date(), data: subscription('active') });
  const res = await deliver(event);
  assert.is(res.status, 200);
  assert.equal(res.body, { ok: true });
  await eventually(async () => (await plan()) === 'pro', 10_000, 'plan pro');
});

test('a subscription ends: canceled or paused puts the account back on free', async () => {
  const sub = subscription('active', { priceId: 'pri_01team' });
  const start = Date.now();
  await deliver(paddleEvent({ eventType: 'subscription.created', occurredAt: new Date(start), data: sub }));
  await eventually(async () => (await plan()) === 'team', 10_000, 'plan team');
  await deliver(paddleEvent({ eventType: 'subscription.paused', occurredAt: new Date(start + 1000), data: { ...sub, status: 'paused' } }));
  await eventually(async () => (await plan()) === 'free', 10_000, 'plan free after pause');
  await deliver(paddleEvent({ eventType: 'subscription.resumed', occurredAt: new Date(start + 2000), data: { ...sub, status: 'active' } }));
  await eventually(async () => (await plan()) === 'team', 10_000, 'plan team after resume');
  await deliver(paddleEvent({ eventType: 'subscription.canceled', occurredAt: new Date(start + 3000), data: { ...sub, status: 'canceled' } }));
  await eventually(async () => (await plan()) === 'free', 10_000, 'plan free after cancel');
});

test('trialing and past_due keep the plan', async () => {
  const sub = subscription('trialing');
  const start = Date.now();
  await deliver(paddleEvent({ eventType: 'subscription.trialing', occurredAt: new Date(start), data: sub }));
  await eventually(async () => (await plan()) === 'pro', 10_000, 'pro while trialing');
  const pastDue = paddleEvent({ eventType: 'subscription.past_due', occurredAt: new Date(start + 1000), data: { ...sub, status: 'past_due' } });
  await deliver(pastDue);
  assert.is((await settled(pastDue.event_id)).state, 'processed');
  assert.is(await plan(), 'pro');
});

test('an event older than the last applied one of its subscription changes nothing', async () => {
  const sub = subscription('active');
  const start = Date.now();
  const newer = paddleEvent({ eventType: 'subscription.canceled', occurredAt: new Date(start + 5000), data: { ...sub, status: 'canceled' } });
  await deliver(newer);
  assert.is((await settled(newer.event_id)).state, 'processed');
  const older = paddleEvent({ eventType: 'subscription.activated', occurredAt: new Date(start), data: sub });
  await deliver(older);
  const row = await settled(older.event_id);
  assert.is(row.state, 'ignored');
  assert.match(row.reason ?? '', /older/);
  assert.is(await plan(), 'free');
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
  assert.ok(attempts.every((row) => row.attempts === 1));
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
  assert.is(await inboxRow(event.event_id), undefined);
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

test.run();
