import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Queryable } from '../server/src/lib/db.ts';
import { lockPayments } from '../server/src/modules/sites/sites.repo.ts';
import { processInboxEntries, processInboxEntry } from '../server/src/webhooks/inbox/processor.ts';
import { request, testFetch, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';
import {
  applyChunksCrossed,
  keptNotDispatched as keptNotDispatchedIn,
  post,
  startWithOwner,
  stripeEvent,
  stripeHeaders,
  unixNow,
  withEventEndpoint,
  type Caller,
} from './helpers/webhook-fixtures.ts';

// Stripe deliveries to POST /webhook/payment/{siteKey}, signed by stripe-node itself.

let service: TestService;
let caller: Caller;
let siteKey: string;
const SECRET = `whsec_${randomBytes(24).toString('base64url')}`;

test.before(async () => {
  ({ service, caller } = await startWithOwner());
  ({ siteKey } = await caller.sites.create({ name: 'Shop', paymentWebhookSecret: SECRET }));
});

test.after(async () => {
  await service?.close();
});

const path = () => `/webhook/payment/${siteKey}`;

function deliver(event: object, options: { secret?: string; timestamp?: number; site?: string } = {}) {
  const payload = JSON.stringify(event, null, 2);
  const headers = stripeHeaders(payload, options.secret ?? SECRET, options.timestamp ?? unixNow(service));
  return post(service, options.site ? `/webhook/payment/${options.site}` : path(), payload, headers);
}

const payments = () => caller.sites.payments({ siteKey });

async function paymentOf(reference: string, status?: string) {
  return eventually(`payment ${reference} ${status ?? ''}`, async () => {
    const found = (await payments()).items.find((item) => item.reference === reference);
    return found && (!status || found.status === status) ? found : undefined;
  });
}

async function inboxRows(externalId: string) {
  return service.deps.db.query<{ state: string; scope: string; reason: string | null }>(
    `SELECT state, scope, reason FROM webhook_inbox WHERE provider = 'payment' AND external_id = $1`,
    [externalId],
  );
}

const ids = () => {
  const n = randomBytes(8).toString('hex');
  return { pi: `pi_${n}`, cs: `cs_test_${n}`, ch: `ch_${n}` };
};

const intentObject = (pi: string, amount = 2500) => ({ id: pi, object: 'payment_intent', amount, amount_received: amount, currency: 'eur', status: 'succeeded' });

test('a signed payment_intent.succeeded is acknowledged and the payment becomes paid with its amount', async () => {
  const { pi } = ids();
  const event = stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: intentObject(pi, 4999) });
  const res = await deliver(event);
  assert.is(res.status, 200);
  assert.equal(res.body, { ok: true });
  const payment = await paymentOf(pi, 'paid');
  assert.is(payment.amount, 4999);
  assert.is(payment.currency, 'eur');
  const [row] = await inboxRows(event.id);
  assert.is(row.state, 'processed');
  assert.is(row.scope, siteKey);
});

test('a replayed delivery is answered 200 again but kept once and applied once', async () => {
  const { pi } = ids();
  const event = stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: intentObject(pi) });
  const answers = await Promise.all([deliver(event), deliver(event), deliver(event)]);
  assert.equal(answers.map((a) => a.status), [200, 200, 200]);
  await paymentOf(pi, 'paid');
  assert.is((await deliver(event)).status, 200);
  assert.is((await inboxRows(event.id)).length, 1);
  assert.is((await payments()).items.filter((item) => item.reference === pi).length, 1);
});

test('checkout session then its payment intent: one payment, keyed by the payment intent', async () => {
  const { pi, cs } = ids();
  const now = unixNow(service);
  const session = { id: cs, object: 'checkout.session', amount_total: 1200, currency: 'usd', payment_status: 'unpaid', payment_intent: null, mode: 'payment' };
  await deliver(stripeEvent({ type: 'checkout.session.completed', created: now, object: session }));
  // An async payment method: the session completed, the money has not arrived.
  await paymentOf(cs, 'pending');
  await deliver(stripeEvent({ type: 'checkout.session.async_payment_succeeded', created: now + 5, object: { ...session, payment_status: 'paid', payment_intent: pi } }));
  const paid = await paymentOf(pi, 'paid');
  assert.is(paid.amount, 1200);
  assert.is(paid.currency, 'usd');
  const items = (await payments()).items;
  assert.not.ok(items.some((item) => item.reference === cs), 'the session-keyed row was merged into the payment intent');
});

test('every listed event type maps to its status', async () => {
  const now = unixNow(service);
  const cases: Array<[string, string, (r: ReturnType<typeof ids>) => Record<string, unknown>, (r: ReturnType<typeof ids>) => string]> = [
    ['checkout.session.completed', 'paid', (r) => ({ id: r.cs, object: 'checkout.session', payment_intent: r.pi, amount_total: 100, currency: 'eur', payment_status: 'paid' }), (r) => r.pi],
    ['checkout.session.async_payment_failed', 'failed', (r) => ({ id: r.cs, object: 'checkout.session', payment_intent: r.pi, amount_total: 100, currency: 'eur', payment_status: 'unpaid' }), (r) => r.pi],
    ['checkout.session.expired', 'expired', (r) => ({ id: r.cs, object: 'checkout.session', payment_intent: null, amount_total: 100, currency: 'eur', status: 'expired' }), (r) => r.cs],
    ['payment_intent.payment_failed', 'failed', (r) => ({ ...intentObject(r.pi), status: 'requires_payment_method' }), (r) => r.pi],
    ['charge.refunded', 'refunded', (r) => ({ id: r.ch, object: 'charge', payment_intent: r.pi, amount: 100, amount_refunded: 100, refunded: true, currency: 'eur' }), (r) => r.pi],
  ];
  for (const [type, status, object, reference] of cases) {
    const r = ids();
    assert.is((await deliver(stripeEvent({ type, created: now, object: object(r) }))).status, 200, type);
    await paymentOf(reference(r), status);
  }
});

test('an older event never undoes a newer state, and refunded is final', async () => {
  const { pi, ch } = ids();
  const now = unixNow(service);
  await deliver(stripeEvent({ type: 'payment_intent.succeeded', created: now, object: intentObject(pi) }));
  const paid = await paymentOf(pi, 'paid');
  service.clock.advance(1_000);
  const olderFailure = stripeEvent({ type: 'payment_intent.payment_failed', created: now - 60, object: intentObject(pi) });
  await deliver(olderFailure);
  await eventually('the older failure processed', async () => (await inboxRows(olderFailure.id))[0]?.state === 'processed');
  // Nothing new: the payment is left as it was, its updatedAt (and its place in the list) too.
  assert.equal(await paymentOf(pi), paid);

  await deliver(stripeEvent({ type: 'charge.refunded', created: now + 10, object: { id: ch, object: 'charge', payment_intent: pi, amount: 2500, amount_refunded: 2500, refunded: true, currency: 'eur' } }));
  await paymentOf(pi, 'refunded');
  const late = stripeEvent({ type: 'payment_intent.succeeded', created: now + 20, object: intentObject(pi) });
  await deliver(late);
  await eventually('the late success processed', async () => (await inboxRows(late.id))[0]?.state === 'processed');
  assert.is((await paymentOf(pi)).status, 'refunded');
});

test('events of other types are kept and ignored with a reason', async () => {
  const event = stripeEvent({ type: 'customer.created', created: unixNow(service), object: { id: 'cus_1', object: 'customer' } });
  assert.is((await deliver(event)).status, 200);
  const row = await eventually('the event ignored', async () => (await inboxRows(event.id)).find((r) => r.state === 'ignored'));
  assert.match(row.reason ?? '', /customer\.created/);
});

test('a wrong secret, a missing or malformed header are 401 and nothing is kept', async () => {
  const event = stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: intentObject(ids().pi) });
  const payload = JSON.stringify(event);
  const forged = await deliver(event, { secret: 'whsec_attacker_guess' });
  assert.is(forged.status, 401);
  assert.is(forged.body.code, 'INVALID_SIGNATURE');
  assert.is(forged.body.success, false);
  const missing = await post(service, path(), payload, { 'content-type': 'application/json' });
  assert.is(missing.status, 401);
  const garbageHeader = await post(service, path(), payload, { 'stripe-signature': 'garbage' });
  assert.is(garbageHeader.status, 401);
  // The signature of another body does not carry over to this one.
  const tampered = stripeHeaders(payload, SECRET, unixNow(service));
  const changed = await post(service, path(), payload.replace('"succeeded"', '"failed"'), tampered);
  assert.is(changed.status, 401);
  assert.is((await inboxRows(event.id)).length, 0);

  // Each refusal is logged with its reason and the request's id, never with the signature.
  const requestId = `refused-${randomBytes(6).toString('hex')}`;
  const signature = stripeHeaders(payload, 'whsec_attacker_guess', unixNow(service));
  assert.is((await post(service, path(), payload, { ...signature, 'x-request-id': requestId })).status, 401);
  const logged = service.logs.lines.map((line) => JSON.parse(line)).filter((line) => line.requestId === requestId && line.msg === 'webhook signature rejected');
  assert.equal(logged.map((line) => [line.provider, line.reason]), [['payment', 'mismatch']]);
  assert.not.match(JSON.stringify(logged), signature['stripe-signature'].split('v1=')[1]);
});

test("an accepted delivery makes no child logger: the request's logger is made only for a refusal", async () => {
  const logger = service.deps.logger;
  const made: string[] = [];
  const child = logger.child;
  // pino's generic signature cannot be restated here; the wrapper only counts and passes on.
  logger.child = ((bindings: { requestId?: unknown }, options?: object) => {
    made.push(String(bindings.requestId));
    return child.call(logger, bindings, options);
  }) as unknown as typeof logger.child;
  try {
    const event = stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: intentObject(ids().pi) });
    const payload = JSON.stringify(event);
    const [accepted, refused] = [`accepted-${randomBytes(6).toString('hex')}`, `refused-${randomBytes(6).toString('hex')}`];
    assert.is((await post(service, path(), payload, { ...stripeHeaders(payload, SECRET, unixNow(service)), 'x-request-id': accepted })).status, 200);
    assert.is((await post(service, path(), payload, { ...stripeHeaders(payload, 'whsec_wrong', unixNow(service)), 'x-request-id': refused })).status, 401);
    assert.equal(made.filter((id) => id === accepted || id === refused), [refused]);
  } finally {
    logger.child = child;
  }
});

test('a signature older (or newer) than 300 s is 401', async () => {
  const event = stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: intentObject(ids().pi) });
  assert.is((await deliver(event, { timestamp: unixNow(service) - 301 })).status, 401);
  assert.is((await deliver(event, { timestamp: unixNow(service) + 301 })).status, 401);
  // The service's clock decides: moving it makes a fresh signature stale.
  const timestamp = unixNow(service);
  service.clock.advance(299_000);
  assert.is((await deliver(event, { timestamp })).status, 200);
  service.clock.advance(2_000);
  assert.is((await deliver(event, { timestamp })).status, 401);
  service.clock.set(new Date());
});

test('an unknown site is 404', async () => {
  const event = stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: intentObject(ids().pi) });
  const res = await deliver(event, { site: 'site_doesnotexist' });
  assert.is(res.status, 404);
  assert.is(res.body.code, 'NOT_FOUND');
});

test('a valid signature over malformed JSON is 400 and nothing is kept', async () => {
  const before = await service.deps.db.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_inbox`);
  for (const payload of ['{"id": "evt_1", "type": ', '[1,2,3]', '{"id":"evt_x","type":"payment_intent.succeeded"}', '']) {
    const res = await post(service, path(), payload, stripeHeaders(payload, SECRET, unixNow(service)));
    assert.is(res.status, 400, payload);
    assert.is(res.body.code, 'INVALID_PAYLOAD');
  }
  const after = await service.deps.db.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_inbox`);
  assert.is(after[0].n, before[0].n);
});

test('a signed event the inbox cannot keep is 400, not 5xx: a NUL in any field, an id too long or with a control character; the deliveries beside it are kept', async () => {
  const before = await service.deps.db.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_inbox`);
  const created = unixNow(service);
  const poisoned: Array<[object, RegExp]> = [
    [stripeEvent({ id: 'evt_nul\u0000id', type: 'payment_intent.succeeded', created, object: intentObject(ids().pi) }), /NUL character/],
    [stripeEvent({ id: 'evt_ctl\u0001id', type: 'payment_intent.succeeded', created, object: intentObject(ids().pi) }), /id holds a control character/],
    [stripeEvent({ id: `evt_${'x'.repeat(300_000)}`, type: 'payment_intent.succeeded', created, object: intentObject(ids().pi) }), /id must be 1 to 255 characters/],
    [stripeEvent({ type: 'payment_intent.succeeded', created, object: intentObject(`pi_nul\u0000${ids().pi}`) }), /NUL character/],
    [stripeEvent({ type: 'payment_intent.succeeded', created, object: { ...intentObject(ids().pi), ['meta\u0000data']: 'x' } }), /NUL character/],
  ];
  const fine = Array.from({ length: 20 }, () => stripeEvent({ type: 'payment_intent.succeeded', created, object: intentObject(ids().pi) }));
  // All at once, so that the writer would group them into shared commits.
  const answers = await Promise.all([...poisoned.map(([event]) => deliver(event)), ...fine.map((event) => deliver(event))]);
  poisoned.forEach(([, problem], index) => {
    assert.is(answers[index].status, 400, answers[index].text.slice(0, 200));
    assert.is(answers[index].body.code, 'INVALID_PAYLOAD');
    assert.match(answers[index].body.message, problem);
  });
  assert.equal(answers.slice(poisoned.length).map((answer) => answer.status), fine.map(() => 200));
  const after = await service.deps.db.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_inbox`);
  assert.is(Number(after[0].n), Number(before[0].n) + fine.length);
  // An escaped backslash before u0000 is text, not a NUL: kept.
  const literal = stripeEvent({ type: 'payment_intent.succeeded', created, object: { ...intentObject(ids().pi), description: 'a \\u0000 b' } });
  assert.is((await deliver(literal)).status, 200);
});

test('garbage bodies without a signature are 401', async () => {
  const res = await post(service, path(), randomBytes(2048), { 'content-type': 'application/octet-stream' });
  assert.is(res.status, 401);
});

test('a body over 1 MiB is 413, whether declared or streamed', async () => {
  const event = stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: { ...intentObject(ids().pi), padding: 'x'.repeat(1024 * 1024) } });
  const payload = JSON.stringify(event);
  const declared = await post(service, path(), payload, stripeHeaders(payload, SECRET, unixNow(service)));
  assert.is(declared.status, 413);
  assert.is(declared.body.code, 'PAYLOAD_TOO_LARGE');
  const bytes = Buffer.from(payload);
  const stream = new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.subarray(i, i + 64 * 1024));
      controller.close();
    },
  });
  const streamed = await testFetch(service.url + path(), {
    method: 'POST',
    body: stream,
    headers: stripeHeaders(payload, SECRET, unixNow(service)),
    duplex: 'half',
  } as RequestInit);
  assert.is(streamed.status, 413);
  // Exactly 1 MiB is still accepted by the reader (and then judged by its signature).
  const atLimit = Buffer.alloc(1024 * 1024, 0x20);
  assert.is((await post(service, path(), atLimit, { 'stripe-signature': 't=1,v1=00' })).status, 401);
});

test('another method on a webhook path is 405', async () => {
  const res = await request(service.url, 'GET', path());
  assert.is(res.status, 405);
  assert.is(res.body.code, 'METHOD_NOT_ALLOWED');
  assert.is(res.headers.get('allow'), 'POST');
});

test('when the database cannot take the delivery the answer is 503, so Stripe retries', async () => {
  const event = stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: intentObject(ids().pi) });
  const db = service.deps.db;
  // A real refusal by the database between the (cached) secret lookup and the commit: for
  // the moment, the inbox accepts no new row.
  await db.query('ALTER TABLE webhook_inbox ADD CONSTRAINT test_refuse_all CHECK (false) NOT VALID');
  try {
    const res = await deliver(event);
    assert.is(res.status, 503);
    assert.is(res.body.code, 'SERVICE_UNAVAILABLE');
    assert.not.match(res.text, /test_refuse_all|violates/);
  } finally {
    await db.query('ALTER TABLE webhook_inbox DROP CONSTRAINT test_refuse_all');
  }
  assert.is((await deliver(event)).status, 200, 'the provider retry is kept once the database takes it');
  const kept = await db.query(`SELECT 1 FROM webhook_inbox WHERE provider = 'payment' AND external_id = $1`, [event.id]);
  assert.is(kept.length, 1);
});

test('the signing secret never appears in logs or answers', async () => {
  const list = await caller.sites.list();
  assert.not.match(JSON.stringify(list), SECRET);
  assert.not.match(service.logs.text(), SECRET);
  const [row] = await service.deps.db.query<{ secret_sealed: string }>('SELECT secret_sealed FROM sites WHERE site_key = $1', [siteKey]);
  assert.not.match(row.secret_sealed, SECRET);
});

const keptNotDispatched = (payload: string) => keptNotDispatchedIn(service, 'payment', siteKey, payload);

const succeeded = (pi: string) => JSON.stringify(stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: intentObject(pi) }));

async function entryStates(ids: string[]) {
  const rows = await service.deps.db.query<{ id: string; state: string; attempts: number }>('SELECT id, state, attempts FROM webhook_inbox WHERE id = ANY($1::uuid[])', [ids]);
  return ids.map((id) => rows.find((row) => row.id === id)).map((row) => row && `${row.state}/${row.attempts}`);
}

test("a worker chunk applies its waiting entries in order, skips one already applied, and is all or nothing", async () => {
  const [a, b, c] = [ids(), ids(), ids()];
  const entries = [await keptNotDispatched(succeeded(a.pi)), await keptNotDispatched(succeeded(b.pi)), await keptNotDispatched(succeeded(c.pi))];
  await service.deps.db.query(`UPDATE webhook_inbox SET state = 'processed' WHERE id = $1`, [entries[1]]);
  const applied = await processInboxEntries(service.deps, entries);
  assert.equal(applied, [{ id: entries[0], outcome: { state: 'processed' } }, { id: entries[2], outcome: { state: 'processed' } }]);
  assert.equal(await entryStates(entries), ['processed/1', 'processed/0', 'processed/1'], 'the applied one was not touched again');
  assert.equal(new Set((await payments()).items.map((item) => item.reference)).has(b.pi), false, 'no effect for the skipped entry');
  await paymentOf(a.pi, 'paid');
  await paymentOf(c.pi, 'paid');

  // One entry that cannot be applied (bytes that are not JSON) rolls the whole chunk back.
  const d = ids();
  const chunk = [await keptNotDispatched(succeeded(d.pi)), await keptNotDispatched('not json at all')];
  const failed = await processInboxEntries(service.deps, chunk).then(() => 'applied', () => 'failed');
  assert.is(failed, 'failed');
  assert.equal(await entryStates(chunk), ['received/0', 'received/0']);
  assert.not.ok((await payments()).items.some((item) => item.reference === d.pi), 'the good entry rolled back with the chunk');
  // Entry by entry, as the worker falls back: the good one applies, the bad one fails alone.
  assert.equal(await processInboxEntry(service.deps, chunk[0]), { state: 'processed' });
  await paymentOf(d.pi, 'paid');
  assert.is(await processInboxEntry(service.deps, chunk[1]).then(() => 'applied', () => 'failed'), 'failed');
  assert.equal(await entryStates(chunk), ['processed/1', 'received/0']);
});

test('a chunk applies its payment changes with the effect of applying them one by one: the same payments, the same events in the same order', async () => {
  const other = (await caller.sites.create({ name: 'Other shop', paymentWebhookSecret: SECRET })).siteKey;
  const now = unixNow(service);
  // One payment's life (a session, its intent, the two merged, a stale failure, a refund), an
  // event of another type, a site that is gone, and another site's payment under the same id.
  const deliveries = (r: ReturnType<typeof ids>): Array<[string, object]> => {
    const session = { id: r.cs, object: 'checkout.session', amount_total: 1200, currency: 'usd', payment_status: 'unpaid', payment_intent: null };
    return [
      [siteKey, stripeEvent({ type: 'checkout.session.completed', created: now, object: session })],
      [siteKey, stripeEvent({ type: 'payment_intent.succeeded', created: now + 1, object: intentObject(r.pi, 1200) })],
      [siteKey, stripeEvent({ type: 'checkout.session.async_payment_succeeded', created: now + 5, object: { ...session, payment_status: 'paid', payment_intent: r.pi } })],
      [siteKey, stripeEvent({ type: 'customer.created', created: now + 5, object: { id: 'cus_1', object: 'customer' } })],
      [siteKey, stripeEvent({ type: 'payment_intent.payment_failed', created: now - 60, object: intentObject(r.pi) })],
      [siteKey, stripeEvent({ type: 'charge.refunded', created: now + 10, object: { id: r.ch, object: 'charge', payment_intent: r.pi, amount: 1200, refunded: true, currency: 'usd' } })],
      ['site_gone', stripeEvent({ type: 'payment_intent.succeeded', created: now, object: intentObject(r.pi) })],
      [other, stripeEvent({ type: 'payment_intent.succeeded', created: now + 2, object: intentObject(r.pi, 700) })],
    ];
  };
  const keep = (r: ReturnType<typeof ids>) =>
    Promise.all(deliveries(r).map(([scope, event]) => keptNotDispatchedIn(service, 'payment', scope, JSON.stringify(event))));
  // What the entries left, with the run's ids named alike: the payments of both sites, and each
  // payment.updated event in the order of its deliveries' seq.
  const effects = async (r: ReturnType<typeof ids>) => {
    const named = (text: string) => text.replaceAll(r.pi, 'PI').replaceAll(r.cs, 'CS');
    const rows = await service.deps.db.query<{ site_key: string; reference: string; checkout_session: string | null; status: string; amount: string }>(
      `SELECT s.site_key, p.reference, p.checkout_session, p.status, p.amount FROM payments p JOIN sites s ON s.id = p.site_id
       WHERE p.reference = ANY($1) OR p.checkout_session = ANY($1) ORDER BY s.site_key = $2 DESC, p.reference`,
      [[r.pi, r.cs], siteKey],
    );
    const events = await service.deps.db.query<{ body: string }>(
      `SELECT e.body FROM events e JOIN event_deliveries d ON d.event_id = e.id
       WHERE e.type = 'payment.updated' AND e.body::jsonb -> 'data' ->> 'reference' = ANY($1) ORDER BY d.seq`,
      [[r.pi, r.cs]],
    );
    return {
      payments: rows.map((row) => named(`${row.site_key === siteKey ? 'A' : 'B'} ${row.reference} ${row.checkout_session} ${row.status} ${row.amount}`)),
      events: events.map(({ body }) => {
        const { data } = JSON.parse(body);
        return named(`${data.site_key === siteKey ? 'A' : 'B'} ${data.reference} ${data.status} ${data.amount}`);
      }),
    };
  };

  await withEventEndpoint(service, ['payment.updated'], async () => {
    const [together, alone] = [ids(), ids()];
    const chunk = await keep(together);
    const outcomes = (await processInboxEntries(service.deps, chunk)).map(({ outcome }) => outcome);
    const single = await keep(alone);
    const oneByOne = [];
    for (const id of single) oneByOne.push(await processInboxEntry(service.deps, id));

    const processed = { state: 'processed' };
    assert.equal(outcomes, [
      processed,
      processed,
      processed,
      { state: 'ignored', reason: 'event type customer.created is not handled' },
      processed,
      processed,
      { state: 'ignored', reason: 'the site no longer exists' },
      processed,
    ]);
    assert.equal(oneByOne, outcomes);
    const expected = {
      payments: ['A PI CS refunded 1200', 'B PI null paid 700'],
      events: ['A CS pending 1200', 'A PI paid 1200', 'A PI refunded 1200', 'B PI paid 700'],
    };
    assert.equal(await effects(together), expected, 'applied as one chunk');
    assert.equal(await effects(alone), expected, 'applied one by one');
  });
});

test("a chunk finds its payments by probing each key, even on a payments table never analyzed, not by reading every payment of the site", async () => {
  const { siteKey: busy } = await caller.sites.create({ name: 'Busy shop', paymentWebhookSecret: SECRET });
  const db = service.deps.db;
  const [{ id: siteId }] = await db.query<{ id: number }>('SELECT id FROM sites WHERE site_key = $1', [busy]);
  await db.query(
    `INSERT INTO payments (site_id, reference, checkout_session, status, amount, currency, last_event_at, updated_at)
     SELECT $1, 'pi_seed_' || i, CASE WHEN i % 2 = 0 THEN 'cs_seed_' || i END, 'paid', 100, 'eur', now(), now() FROM generate_series(1, 5000) AS i`,
    [siteId],
  );
  // As before a table's first ANALYZE: PostgreSQL then guesses that a site holds a sliver of
  // the payments, when this one holds nearly all of them.
  await db.query(`DELETE FROM pg_statistic WHERE starelid = 'payments'::regclass`);
  const plans: string[] = [];
  const explaining: Queryable = {
    query: async (text, values) => {
      const sql = typeof text === 'string' ? text : text.text;
      const [row] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, values);
      plans.push(JSON.stringify(row['QUERY PLAN']));
      return [];
    },
  };
  const keys = Array.from({ length: 50 }, (_, i) => ({ siteId, key: i % 2 ? `pi_seed_${1000 + i}` : `cs_seed_${1000 + i}` }));
  await lockPayments(explaining, keys);
  assert.is(plans.length, 1);
  const scans = [...plans[0].matchAll(/"Relation Name":"payments"[^}]*/g)].map(([scan]) => scan);
  assert.ok(scans.length > 0, plans[0]);
  for (const scan of scans) {
    // Both columns of a unique index: the site and the key, never the site alone with the keys as a filter.
    assert.match(scan, /"Index Cond":"\(\(site_id = k(_\d+)?\.site_id\) AND \((reference|checkout_session) = k(_\d+)?\.key\)\)"/, scan);
    assert.not.match(scan, /"Filter"/, scan);
  }
  // And what it finds: each key's payment once, by reference or by checkout session.
  const found = await lockPayments(db, keys);
  assert.equal(found.map((row) => row.reference).sort(), keys.map(({ key }) => key.replace('cs_', 'pi_')).sort());
});

// Two transactions at once: the embedded database has one connection, so only a server can race them.
if (process.env.DATABASE_URL) {
  test('two chunks touching the same payments in opposite orders, with payment.updated subscribed, wait for each other instead of deadlocking', async () => {
    await withEventEndpoint(service, ['payment.updated'], async () => {
      const [p, q] = [ids(), ids()];
      assert.equal(await processInboxEntry(service.deps, await keptNotDispatched(succeeded(q.pi))), { state: 'processed' });
      const refunded = (r: { pi: string; ch: string }) =>
        JSON.stringify(stripeEvent({ type: 'charge.refunded', created: unixNow(service) + 5, object: { id: r.ch, object: 'charge', payment_intent: r.pi, amount: 2500, amount_refunded: 2500, refunded: true, currency: 'eur' } }));
      const first = [await keptNotDispatched(succeeded(p.pi)), await keptNotDispatched(succeeded(q.pi))];
      const second = [await keptNotDispatched(refunded(q)), await keptNotDispatched(refunded(p))];
      // Taking its locks as it goes, the second chunk would hold q and wait for the account's
      // event order, which the first holds (after p) while it waits for q: PostgreSQL would end one.
      const hold = { sql: 'SELECT 1 FROM payments WHERE reference = $1 FOR UPDATE', params: [q.pi] };
      assert.equal(await applyChunksCrossed(service, hold, first, second), ['applied', 'applied']);
      assert.equal(await entryStates([...first, ...second]), ['processed/1', 'processed/1', 'processed/1', 'processed/1']);
      await paymentOf(p.pi, 'refunded');
      await paymentOf(q.pi, 'refunded');
    });
  });
}

test.run();
