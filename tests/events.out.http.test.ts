import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertError, bearer, PASSWORD, registerAndVerify, type Account } from './helpers/auth.ts';
import { EventReceiver } from './helpers/event-receiver.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { paddleEvent, paddleHeaders, post, stripeEvent, stripeHeaders, unixNow, callerFor } from './helpers/webhook-fixtures.ts';
import { eventually } from './helpers/wait.ts';
import { linkToken } from './helpers/smtp.ts';
import { Webhook } from 'standardwebhooks';
import { adminService } from '../server/src/index.ts';
import { RETRY_DELAYS_MS } from '../server/src/modules/events/events.sender.ts';

// Events out (docs/EVENTS.md): signed webhooks to the platform's services, sent by the worker
// to real receivers that verify every request with the `standardwebhooks` package. The test
// clock moves the retry schedule; the receivers answer 200, 500, hang or drop the connection.

const ADMIN = '/api/v1/admin';
const BILLING_SECRET = 'pdl_ntfset_events_tests_secret_0123';
const PAYMENT_SECRET = `whsec_${randomBytes(24).toString('base64url')}`;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

type Context = { service: TestService; admin: Account };
const test = suite<Context>('events out: signed, durable webhooks to the platform');

test.before(async (context) => {
  context.service = await startTestApp({ BILLING_WEBHOOK_SECRET: BILLING_SECRET, BILLING_PLANS: 'pri_pro=pro' });
  context.admin = await registerAndVerify(context.service, 'events-admin@example.com');
  await context.service.deps.db.query(`UPDATE accounts SET role = 'admin' WHERE id = $1`, [context.admin.user.id]);
});
test.after(async ({ service }) => {
  await service?.close();
});

const admin = (service: TestService, who: Account, method: string, path: string, json?: unknown) =>
  request(service.url, method, `${ADMIN}${path}`, { json, headers: bearer(who.token) });

/** A receiver and an endpoint pointing at it, told the endpoint's secret. */
async function endpointFor(context: Context, fields: Record<string, unknown> = {}) {
  const receiver = await EventReceiver.start();
  const created = await admin(context.service, context.admin, 'POST', '/event-endpoints', { url: receiver.url, ...fields });
  assert.is(created.status, 201, created.text);
  receiver.secrets = [created.body.secret];
  const endpoint = created.body.endpoint as { id: string; events: string[]; enabled: boolean };
  /** Removes the endpoint, so that later tests' events do not pile up for a receiver that is gone, then stops the receiver. */
  const close = async () => {
    assert.is((await admin(context.service, context.admin, 'DELETE', `/event-endpoints/${endpoint.id}`)).status, 200);
    await receiver.close();
  };
  return { receiver, endpoint, secret: created.body.secret as string, close };
}

/** Waits until the receiver has `count` verified, answered-200 requests, and returns them. */
const deliveredTo = (receiver: EventReceiver, count: number, what = `${count} events delivered`) =>
  eventually(what, () => (receiver.delivered().length >= count ? receiver.delivered() : undefined));

const deliveriesOf = async (context: Context, endpointId: string, query = '') =>
  (await admin(context.service, context.admin, 'GET', `/event-deliveries?endpoint_id=${endpointId}${query}`)).body.items as Array<Record<string, any>>;

test('an endpoint is made with a whsec_ secret shown once, listed without it, and receives a verified account.created', async (context) => {
  const { service } = context;
  const { receiver, endpoint, secret, close } = await endpointFor(context, { description: 'profiles' });
  try {
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.ok(Buffer.from(secret.slice(6), 'base64').length >= 24);
    assert.equal(endpoint.events.length, 6, 'every type when none was named');
    const listed = await admin(service, context.admin, 'GET', '/event-endpoints');
    const item = listed.body.items.find((row: { id: string }) => row.id === endpoint.id);
    assert.equal(Object.keys(item).sort(), ['created_at', 'description', 'enabled', 'events', 'id', 'url']);
    assert.not.ok(listed.text.includes(secret.slice(6)), 'the secret is never listed');

    const person = await registerAndVerify(service, `created-${randomBytes(3).toString('hex')}@example.com`);
    const [event] = (await deliveredTo(receiver, 1)).filter((body) => body.type === 'account.created');
    assert.equal(event.data.account.id, person.user.id);
    assert.is(event.data.account.email, person.email);
    assert.is(event.data.account.email_verified, true);
    assert.not.ok('api_key' in event.data.account, 'no API key in an event');
    assert.not.ok(receiver.received[0].body.includes(person.apiKey));
    assert.match(event.id, /^msg_/);
    assert.ok(!Number.isNaN(Date.parse(event.timestamp)));
    assert.equal(Object.keys(JSON.parse(receiver.received[0].body)), ['type', 'timestamp', 'data']);
    assert.is(receiver.received[0].headers['content-type'], 'application/json');

    const [delivery] = await eventually('the delivery marked delivered', async () => {
      const items = await deliveriesOf(context, endpoint.id, '&state=delivered');
      return items.length ? items : undefined;
    });
    assert.is(delivery.event_id, event.id);
    assert.is(delivery.attempts, 1);
    assert.is(delivery.last_status, 200);
    assert.is(delivery.next_attempt_at, null);
  } finally {
    await close();
  }
});

test('an endpoint filtered to some types gets only those; a key rotation and a deletion are reported', async (context) => {
  const { service } = context;
  const all = await endpointFor(context);
  const security = await endpointFor(context, { events: ['security.changed', 'account.deleted'] });
  try {
    const person = await registerAndVerify(service, `filtered-${randomBytes(3).toString('hex')}@example.com`);
    const rotated = await request(service.url, 'POST', '/api/v1/auth/api-key/rotate', { json: {}, headers: bearer(person.token) });
    assert.is(rotated.status, 200, rotated.text);
    const deleted = await request(service.url, 'POST', '/api/v1/auth/account/delete', { json: { password: PASSWORD }, headers: bearer(person.token) });
    assert.is(deleted.status, 200, deleted.text);

    const got = await deliveredTo(security.receiver, 2);
    assert.equal(got.map((event) => event.type), ['security.changed', 'account.deleted']);
    assert.equal(got[0].data, { account_id: person.user.id, what: 'api_key' });
    assert.equal(got[1].data, { account_id: person.user.id });
    const everything = await deliveredTo(all.receiver, 3);
    assert.equal(everything.map((event) => event.type), ['account.created', 'security.changed', 'account.deleted']);
    assert.not.ok(all.receiver.received.some((seen) => seen.body.includes(person.apiKey)), 'no key in any event');
  } finally {
    await all.close();
    await security.close();
  }
});


test('plan, role and e-mail changes are account.updated naming the field; a status change of a payment is payment.updated', async (context) => {
  const { service } = context;
  const { receiver, close } = await endpointFor(context, { events: ['account.updated', 'payment.updated'] });
  try {
    const person = await registerAndVerify(service, `updated-${randomBytes(3).toString('hex')}@example.com`);
    // The plan, from the billing provider's webhook.
    const subscription = paddleEvent({
      eventType: 'subscription.activated',
      occurredAt: service.clock.now(),
      data: { id: `sub_${randomBytes(4).toString('hex')}`, status: 'active', items: [{ price: { id: 'pri_pro' } }], custom_data: { account_id: String(person.user.id) } },
    });
    const payload = JSON.stringify(subscription);
    assert.is((await post(service, '/billingprovider/webhook', payload, paddleHeaders(payload, BILLING_SECRET, unixNow(service)))).status, 200);
    const [plan] = await deliveredTo(receiver, 1, 'the plan change');
    assert.equal(plan.data.changed, ['plan']);
    assert.is(plan.data.account.plan, 'pro');
    assert.not.ok('api_key' in plan.data.account);

    // The role, by an operator.
    await adminService.setRole(service.deps, { accountId: null, request: { ip: '127.0.0.1', requestId: 'test' } }, { email: person.email }, 'admin');
    const [, role] = await deliveredTo(receiver, 2, 'the role change');
    assert.equal(role.data.changed, ['role']);
    assert.is(role.data.account.role, 'admin');
    // Setting the same role again changes nothing and says nothing.
    await adminService.setRole(service.deps, { accountId: null, request: { ip: '127.0.0.1', requestId: 'test' } }, { email: person.email }, 'admin');

    // The address, once the new one confirms.
    const newEmail = `moved-${randomBytes(3).toString('hex')}@example.com`;
    const asked = await request(service.url, 'POST', '/api/v1/auth/email/change', { json: { new_email: newEmail, password: PASSWORD }, headers: bearer(person.token) });
    assert.is(asked.status, 200, asked.text);
    const mail = await service.smtp.waitFor(newEmail);
    const confirmed = await request(service.url, 'POST', '/api/v1/auth/email/confirm', { json: { token: linkToken(mail, '/confirm-email') } });
    assert.is(confirmed.status, 200, confirmed.text);
    const [, , email] = await deliveredTo(receiver, 3, 'the e-mail change');
    assert.equal(email.data.changed, ['email']);
    assert.is(email.data.account.email, newEmail);

    // A payment of one of the person's sites.
    const caller = callerFor(service, { id: person.user.id, email: newEmail, token: person.token });
    const { siteKey } = await caller.sites.create({ name: 'Shop', paymentWebhookSecret: PAYMENT_SECRET });
    const pi = `pi_${randomBytes(6).toString('hex')}`;
    const intent = { id: pi, object: 'payment_intent', amount: 2500, amount_received: 2500, currency: 'eur', status: 'succeeded' };
    const paid = JSON.stringify(stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: intent }));
    assert.is((await post(service, `/webhook/payment/${siteKey}`, paid, stripeHeaders(paid, PAYMENT_SECRET, unixNow(service)))).status, 200);
    const [, , , payment] = await deliveredTo(receiver, 4, 'the payment');
    assert.equal(payment.data, { site_key: siteKey, account_id: person.user.id, reference: pi, status: 'paid', amount: 2500, currency: 'eur' });
    // The same status again (a replayed or repeated event) is not news.
    const again = JSON.stringify(stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: intent }));
    assert.is((await post(service, `/webhook/payment/${siteKey}`, again, stripeHeaders(again, PAYMENT_SECRET, unixNow(service)))).status, 200);
    await eventually('the repeated event applied', async () => {
      const [row] = await service.deps.db.query<{ count: string }>(`SELECT count(*) FROM webhook_inbox WHERE provider = 'payment' AND state <> 'received'`);
      return Number(row.count) >= 2;
    });
    const events = await service.deps.db.query<{ type: string }>(`SELECT type FROM events WHERE account_id = $1 ORDER BY created_at`, [person.user.id]);
    assert.equal(events.filter((row) => row.type === 'payment.updated').length, 1);
    assert.equal(events.filter((row) => row.type === 'account.updated').length, 3, 'the repeated role is no event');
  } finally {
    await close();
  }
});

/** Waits until the endpoint's deliveries have `count` attempts recorded in all. */
const attemptsRecorded = (context: Context, endpointId: string, count: number) =>
  eventually(`${count} attempts recorded`, async () => {
    const items = await deliveriesOf(context, endpointId);
    return items.reduce((sum, row) => sum + row.attempts, 0) >= count ? items : undefined;
  });

/** Moves the service clock past the wait after a delivery's `attempts`-th failure (with its most jitter). */
function pastRetry(service: TestService, attempts: number) {
  service.clock.advance(Math.ceil(RETRY_DELAYS_MS[attempts - 1] * 1.2) + 1000);
}

const deliveryById = async (context: Context, id: string) => (await admin(context.service, context.admin, 'GET', `/event-deliveries/${id}`)).body.delivery;

test("a receiver down for a while gets everything once it is up, each account's events in order; the others are not held up", async (context) => {
  const { service } = context;
  const { receiver, endpoint, close } = await endpointFor(context, { events: ['security.changed'] });
  try {
    receiver.mode = 'fail';
    const first = await registerAndVerify(service, `ordered-${randomBytes(3).toString('hex')}@example.com`);
    const second = await registerAndVerify(service, `other-${randomBytes(3).toString('hex')}@example.com`);
    for (let i = 0; i < 3; i++) assert.is((await request(service.url, 'POST', '/api/v1/auth/api-key/rotate', { json: {}, headers: bearer(first.token) })).status, 200);
    assert.is((await request(service.url, 'POST', '/api/v1/auth/api-key/rotate', { json: {}, headers: bearer(second.token) })).status, 200);
    // Each account's first event is tried and fails; the later ones of the first account wait behind it.
    await attemptsRecorded(context, endpoint.id, 2);
    const pending = await deliveriesOf(context, endpoint.id, '&state=pending');
    assert.is(pending.length, 4);
    assert.equal(pending.map((row) => row.attempts).sort(), [0, 0, 1, 1]);
    const tried = receiver.received.map((seen) => JSON.parse(seen.body).data.account_id).sort();
    assert.equal(tried, [first.user.id, second.user.id].sort());
    const failed = await deliveryById(context, pending.find((row) => row.attempts === 1)!.id);
    assert.is(failed.last_status, 500);
    assert.match(failed.last_error, /^HTTP 500: receiver is down/);
    assert.equal(Object.keys(failed.attempts_log[0]).sort(), ['at', 'error', 'ms', 'status']);
    assert.ok(Date.parse(failed.next_attempt_at) >= service.clock.now().getTime() + 5_000);
    assert.ok(Date.parse(failed.next_attempt_at) <= service.clock.now().getTime() + 6_000, 'at most 20% jitter');

    receiver.mode = 'ok';
    pastRetry(service, 1);
    const got = await deliveredTo(receiver, 4);
    const ofFirst = got.filter((event) => event.data.account_id === first.user.id);
    assert.is(ofFirst.length, 3);
    const order = await service.deps.db.query<{ id: string }>(`SELECT id FROM events WHERE account_id = $1 AND type = 'security.changed' ORDER BY created_at, id`, [first.user.id]);
    const sent = ofFirst.map((event) => event.id);
    assert.equal(new Set(sent).size, 3, 'each once');
    const seq = await service.deps.db.query<{ event_id: string }>(`SELECT event_id FROM event_deliveries WHERE endpoint_id = $1 AND account_id = $2 ORDER BY seq`, [endpoint.id, first.user.id]);
    assert.equal(sent, seq.map((row) => row.event_id), 'in the order they happened');
    assert.is(order.length, 3);
    // The failed attempt and the good one carry the same webhook-id.
    const firstId = seq[0].event_id;
    assert.is(receiver.received.filter((seen) => seen.headers['webhook-id'] === firstId).length, 2);
  } finally {
    await close();
  }
});

test('after the last retry a delivery is dead; an admin retries it and it arrives with the same webhook-id', async (context) => {
  const { service } = context;
  const { receiver, endpoint, close } = await endpointFor(context, { events: ['security.changed'] });
  try {
    receiver.mode = 'fail';
    const person = await registerAndVerify(service, `dead-${randomBytes(3).toString('hex')}@example.com`);
    assert.is((await request(service.url, 'POST', '/api/v1/auth/api-key/rotate', { json: {}, headers: bearer(person.token) })).status, 200);
    const [delivery] = await attemptsRecorded(context, endpoint.id, 1);
    for (let attempts = 1; attempts < 8; attempts++) {
      pastRetry(service, attempts);
      await eventually(`attempt ${attempts + 1}`, async () => (await deliveryById(context, delivery.id)).attempts === attempts + 1);
    }
    const dead = await deliveryById(context, delivery.id);
    assert.is(dead.state, 'dead');
    assert.is(dead.next_attempt_at, null);
    assert.is(dead.attempts_log.length, 8);
    assert.ok(dead.attempts_log.every((attempt: { status: number }) => attempt.status === 500));
    // Nothing more is tried however long it waits.
    service.clock.advance(2 * DAY);
    const seen = receiver.received.length;
    assert.is(seen, 8);

    receiver.mode = 'ok';
    const retried = await admin(service, context.admin, 'POST', `/event-deliveries/${delivery.id}/retry`);
    assert.is(retried.status, 200, retried.text);
    assert.equal(retried.body, { success: true });
    const [arrived] = await deliveredTo(receiver, 1, 'the retried delivery');
    assert.is(arrived.id, delivery.event_id);
    assert.equal(arrived.data, { account_id: person.user.id, what: 'api_key' });
    await eventually('delivered', async () => (await deliveryById(context, delivery.id)).state === 'delivered');
  } finally {
    await close();
  }
});

test("after a rotation both secrets sign during the grace, then the new one alone", async (context) => {
  const { service } = context;
  const { receiver, endpoint, secret: oldSecret, close } = await endpointFor(context);
  try {
    const rotated = await admin(service, context.admin, 'POST', `/event-endpoints/${endpoint.id}/rotate-secret`, { grace_seconds: 3600 });
    assert.is(rotated.status, 200, rotated.text);
    const newSecret = rotated.body.secret as string;
    assert.match(newSecret, /^whsec_/);
    assert.is.not(newSecret, oldSecret);

    const ping = async () => {
      const before = receiver.received.length;
      const tested = await admin(service, context.admin, 'POST', `/event-endpoints/${endpoint.id}/test`);
      assert.is(tested.status, 200, tested.text);
      return eventually('the ping', () => receiver.received[before]);
    };
    const during = await ping();
    assert.is(during.headers['webhook-signature'].split(' ').length, 2);
    for (const secret of [oldSecret, newSecret]) {
      assert.equal(new Webhook(secret).verify(during.body, during.headers), { type: 'ping', timestamp: JSON.parse(during.body).timestamp, data: {} });
    }
    service.clock.advance(3601_000);
    const after = await ping();
    assert.is(after.headers['webhook-signature'].split(' ').length, 1);
    assert.ok(new Webhook(newSecret).verify(after.body, after.headers));
    assert.throws(() => new Webhook(oldSecret).verify(after.body, after.headers));

    // Without a grace the old secret stops at once.
    const sharp = await admin(service, context.admin, 'POST', `/event-endpoints/${endpoint.id}/rotate-secret`, {});
    const latest = await ping();
    assert.is(latest.headers['webhook-signature'].split(' ').length, 1);
    assert.ok(new Webhook(sharp.body.secret).verify(latest.body, latest.headers));
  } finally {
    await close();
  }
});

test('five days without a 2xx disable an endpoint and mail the admins; its events are skipped until retry-dead', async (context) => {
  const { service } = context;
  const failing = await endpointFor(context, { events: ['security.changed'] });
  const witness = await endpointFor(context, { events: ['security.changed'] });
  try {
    failing.receiver.mode = 'fail';
    const person = await registerAndVerify(service, `disable-${randomBytes(3).toString('hex')}@example.com`);
    const rotate = async () => assert.is((await request(service.url, 'POST', '/api/v1/auth/api-key/rotate', { json: {}, headers: bearer(person.token) })).status, 200);
    await rotate();
    await attemptsRecorded(context, failing.endpoint.id, 1);
    service.clock.advance(5 * DAY + MINUTE);
    // The retry due long ago goes now, fails, and five days of failure end it.
    await eventually('the endpoint disabled', async () => {
      const listed = await admin(service, context.admin, 'GET', '/event-endpoints');
      return listed.body.items.find((row: { id: string }) => row.id === failing.endpoint.id)?.enabled === false;
    });
    const notice = await service.smtp.waitFor(context.admin.email, (mail) => /event endpoint was disabled/i.test(mail.subject) && mail.text.includes(failing.endpoint.id));
    assert.match(notice.text, '(http://127.0.0.1:');
    assert.not.match(notice.text, failing.secret.slice(6));
    const requests = failing.receiver.received.length;

    // While disabled: recorded as skipped, no request. The witness shows the sender got that far.
    await rotate();
    await deliveredTo(witness.receiver, 2);
    const skipped = await deliveriesOf(context, failing.endpoint.id, '&state=skipped');
    assert.is(skipped.length, 2, 'the pending one and the new one');
    assert.is(failing.receiver.received.length, requests);
    assertError(await admin(service, context.admin, 'POST', `/event-endpoints/${failing.endpoint.id}/test`), 409, 'CONFLICT');
    assertError(await admin(service, context.admin, 'POST', `/event-deliveries/${skipped[0].id}/retry`), 409, 'CONFLICT');

    // Enabled again: new events go; the skipped ones only with retry-dead.
    failing.receiver.mode = 'ok';
    const enabled = await admin(service, context.admin, 'PATCH', `/event-endpoints/${failing.endpoint.id}`, { enabled: true });
    assert.is(enabled.status, 200, enabled.text);
    assert.is(enabled.body.endpoint.enabled, true);
    await rotate();
    await deliveredTo(witness.receiver, 3);
    const [fresh] = await deliveredTo(failing.receiver, 1, 'the new event');
    assert.is(failing.receiver.delivered().length, 1, 'nothing older by itself');
    const retried = await admin(service, context.admin, 'POST', `/event-endpoints/${failing.endpoint.id}/retry-dead`, {});
    assert.equal(retried.body, { success: true, retried: 2 });
    const all = await deliveredTo(failing.receiver, 3, 'the skipped ones');
    assert.equal(new Set(all.map((event) => event.id)).size, 3);
    assert.ok(all.some((event) => event.id === fresh.id));
  } finally {
    await failing.close();
    await witness.close();
  }
});

test('a receiver that drops the connection or hangs past 15 s is a failed attempt, retried', async (context) => {
  const { service } = context;
  const { receiver, endpoint, close } = await endpointFor(context);
  try {
    receiver.mode = 'close';
    const dropped = await admin(service, context.admin, 'POST', `/event-endpoints/${endpoint.id}/test`);
    const closed = await eventually('the dropped attempt recorded', async () => {
      const row = await deliveryById(context, dropped.body.delivery_id);
      return row.attempts === 1 ? row : undefined;
    });
    assert.is(closed.state, 'pending');
    assert.is(closed.last_status, null);
    assert.match(closed.last_error, /^connection failed/);

    receiver.mode = 'hang';
    const hung = await admin(service, context.admin, 'POST', `/event-endpoints/${endpoint.id}/test`);
    const timedOut = await eventually('the hung attempt recorded', async () => {
      const row = await deliveryById(context, hung.body.delivery_id);
      return row.attempts === 1 ? row : undefined;
    });
    assert.is(timedOut.last_error, 'no answer within 15 s');
    assert.ok(timedOut.attempts_log[0].ms >= 14_000, `${timedOut.attempts_log[0].ms} ms`);

    receiver.mode = 'ok';
    pastRetry(service, 1);
    const got = await deliveredTo(receiver, 2, 'both, retried');
    assert.equal(got.map((event) => event.type), ['ping', 'ping']);
  } finally {
    await close();
  }
});

test.run();
