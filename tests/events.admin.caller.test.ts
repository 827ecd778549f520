import { randomBytes, randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EVENT_TYPES, emitEvent } from '../server/src/modules/events/index.ts';
import { assertError, registerAdmin, registerAndVerify, type Account } from './helpers/auth.ts';
import { answerOf, callerOf } from './helpers/caller.ts';
import { EventReceiver } from './helpers/event-receiver.ts';
import { changeName, deliveredTo, endpointFor, operator, ping } from './helpers/event-endpoints.ts';
import { startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// Events out for operators (docs/EVENTS.md, contract section 12): the rules of the admin
// procedures on endpoints and deliveries, and of the events account changes emit, called in
// process; each endpoint is a real receiver on a real port. What HTTP adds (refusals to
// non-admins, garbage, the tRPC names, secrets kept out of logs, reads recorded over both
// transports, the metrics, visitor messages through their webhook) is tested over REST in
// tests/events.admin.rest.test.ts.

type Context = { service: TestService; admin: Account };
const test = suite<Context>('admin event endpoints and deliveries, and the events account changes emit');

test.before(async (context) => {
  context.service = await startTestApp();
  context.admin = await registerAdmin(context.service, 'events-operator@example.com');
});
test.after(async ({ service }) => {
  await service?.close();
});

const fresh = (context: Context, label: string) => registerAndVerify(context.service, `${label}-${randomBytes(3).toString('hex')}@example.com`);
const deliveryState = async (context: Context, id: string) => (await operator(context).eventDelivery({ id })).delivery;
type Filter = { endpoint_id?: string; state?: 'pending' | 'delivered' | 'dead'; type?: string; limit?: number; cursor?: string };
const deliveries = async (context: Context, filter: Filter) => (await operator(context).eventDeliveries(filter as never)).items;

test('deliveries are listed newest first, a page at a time to the end, each once; state, type and endpoint_id filter', async (context) => {
  const person = await fresh(context, 'paged');
  const good = await endpointFor(context);
  const failing = await endpointFor(context, { events: ['security.changed'] });
  failing.receiver.mode = 'fail';
  try {
    await changeName(context.service, person, 'Paged Person');
    const pings: string[] = [];
    for (let i = 0; i < 7; i++) pings.push(await ping(context, good.id));
    const stuck = await ping(context, failing.id);
    await deliveredTo(good.receiver, 8);
    await eventually('all eight delivered', async () => (await deliveries(context, { endpoint_id: good.id, state: 'delivered' })).length === 8);
    await eventually('the failing ping tried', async () => (await deliveryState(context, stuck)).attempts === 1);
    const [updated] = await deliveries(context, { endpoint_id: good.id, type: 'account.updated' });
    assert.is(updated.type, 'account.updated');
    const expected = [...pings].reverse().concat(updated.id);

    const pageSizes: number[] = [];
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: { items: Array<{ id: string }>; next_cursor: string | null } = await operator(context).eventDeliveries({ endpoint_id: good.id, limit: 3, ...(cursor ? { cursor } : {}) });
      pageSizes.push(page.items.length);
      seen.push(...page.items.map((item) => item.id));
      cursor = page.next_cursor;
      assert.ok(pageSizes.length <= 4, 'the paging ends');
    }
    assert.equal(pageSizes, [3, 3, 2]);
    assert.equal(seen, expected, 'every delivery once, newest first');

    const [first] = await deliveries(context, { endpoint_id: good.id, limit: 1 });
    assert.equal(Object.keys(first).sort(), ['attempts', 'created_at', 'endpoint_id', 'event_id', 'id', 'last_error', 'last_status', 'next_attempt_at', 'state', 'type']);
    assert.equal((await deliveries(context, { endpoint_id: good.id, type: 'ping' })).map((item) => item.id), [...pings].reverse());
    const typedPage = await operator(context).eventDeliveries({ endpoint_id: good.id, type: 'ping', limit: 5 });
    const typedRest = await deliveries(context, { endpoint_id: good.id, type: 'ping', limit: 5, cursor: typedPage.next_cursor! });
    assert.equal([...typedPage.items, ...typedRest].map((item) => item.id), [...pings].reverse());
    assert.equal((await deliveries(context, { endpoint_id: failing.id })).map((item) => item.id), [stuck]);
    assert.equal(await deliveries(context, { endpoint_id: failing.id, state: 'delivered' }), []);
    const pending = await deliveries(context, { state: 'pending' });
    assert.ok(pending.some((item) => item.id === stuck));
    assert.ok(pending.every((item) => item.state === 'pending' && item.endpoint_id !== good.id));
    assert.equal((await deliveries(context, { type: 'ping', state: 'pending', endpoint_id: failing.id })).map((item) => item.id), [stuck]);
    assert.ok((await deliveries(context, { type: 'account.updated' })).every((item) => item.type === 'account.updated'));
    assert.equal(await deliveries(context, { endpoint_id: randomUUID() }), []);
  } finally {
    await good.close();
    await failing.close();
  }
});

test('an update changes url, events (null: all again) and description (null clears); a filtered endpoint receives only its types', async (context) => {
  const person = await fresh(context, 'patched');
  const { id, receiver: first, secret, close } = await endpointFor(context, { events: ['account.created'], description: 'first' });
  const second = await EventReceiver.start();
  second.secrets = [secret];
  const update = (input: Record<string, unknown>) => operator(context).updateEventEndpoint({ id, ...input } as never);
  try {
    const moved = await update({ url: second.url, events: ['security.changed', 'account.updated'], description: null });
    assert.equal(Object.keys(moved).sort(), ['endpoint', 'success']);
    assert.is(moved.endpoint.url, second.url);
    assert.equal(moved.endpoint.events, ['security.changed', 'account.updated']);
    assert.is(moved.endpoint.description, null);
    const listed = (await operator(context).eventEndpoints()).items.find((item) => item.id === id);
    assert.equal(listed, moved.endpoint);

    const all = await update({ events: null, description: '  billing team  ' });
    assert.equal(all.endpoint.events, [...EVENT_TYPES]);
    assert.is(all.endpoint.description, 'billing team');
    assert.is(all.endpoint.url, second.url, 'what was not given stays');
    assert.equal((await update({})).endpoint, all.endpoint);

    const filtered = await update({ events: ['security.changed'] });
    assert.equal(filtered.endpoint.events, ['security.changed']);
    await changeName(context.service, person, 'Not Sent Anywhere');
    await callerOf(context.service, { bearer: person.token }).auth.rotateApiKey({});
    const [event] = await deliveredTo(second, 1, 'the security change');
    assert.equal(event.type, 'security.changed');
    assert.equal(event.data, { account_id: person.user.id, what: 'api_key' });
    // Deliveries are made when the event is: the account.updated got none here.
    const types = await context.service.deps.db.query<{ type: string }>('SELECT type FROM event_deliveries WHERE endpoint_id = $1', [id]);
    assert.equal(types.map((row) => row.type), ['security.changed']);
    assert.is(second.received.length, 1);
    assert.is(first.received.length, 0, 'nothing to the old URL');
  } finally {
    await close();
    await second.close();
  }
});

test('a deletion removes the endpoint and its deliveries; a later event is not delivered there', async (context) => {
  const { service } = context;
  const person = await fresh(context, 'deleted');
  const doomed = await endpointFor(context, { events: ['account.updated'] });
  const witness = await endpointFor(context, { events: ['account.updated'] });
  const ops = operator(context);
  try {
    const pinged = await ping(context, doomed.id);
    await changeName(service, person, 'Before Deletion');
    await deliveredTo(doomed.receiver, 2);
    await deliveredTo(witness.receiver, 1);
    assert.equal(await ops.deleteEventEndpoint({ id: doomed.id }), { success: true });
    assert.not.ok((await ops.eventEndpoints()).items.some((item) => item.id === doomed.id));
    const [rows] = await service.deps.db.query<{ count: string }>('SELECT count(*) FROM event_deliveries WHERE endpoint_id = $1', [doomed.id]);
    assert.is(Number(rows.count), 0);
    assertError(await answerOf(ops.eventDelivery({ id: pinged })), 404, 'NOT_FOUND');
    assert.equal(await deliveries(context, { endpoint_id: doomed.id }), []);
    assertError(await answerOf(ops.deleteEventEndpoint({ id: doomed.id })), 404, 'NOT_FOUND');
    assertError(await answerOf(ops.updateEventEndpoint({ id: doomed.id, enabled: true })), 404, 'NOT_FOUND');
    assertError(await answerOf(ops.testEventEndpoint({ id: doomed.id })), 404, 'NOT_FOUND');

    await changeName(service, person, 'After Deletion');
    const [, later] = await deliveredTo(witness.receiver, 2, 'the later event, at the witness');
    assert.is(later.data.account.name, 'After Deletion');
    assert.is(doomed.receiver.received.length, 2, 'nothing more to the deleted endpoint');
    const [after] = await service.deps.db.query<{ count: string }>('SELECT count(*) FROM event_deliveries WHERE endpoint_id = $1', [doomed.id]);
    assert.is(Number(after.count), 0);
  } finally {
    await doomed.close();
    await witness.close();
  }
});

test('a profile name change is account.updated naming name; the same name again emits nothing', async (context) => {
  const person = await fresh(context, 'renamed');
  const { receiver, close } = await endpointFor(context, { events: ['account.updated'] });
  try {
    await changeName(context.service, person, 'Grace Hopper');
    const [renamed] = await deliveredTo(receiver, 1, 'the rename');
    assert.equal(renamed.data.changed, ['name']);
    assert.is(renamed.data.account.id, person.user.id);
    assert.is(renamed.data.account.name, 'Grace Hopper');
    assert.not.ok('api_key' in renamed.data.account);
    await changeName(context.service, person, 'Grace Hopper');
    await changeName(context.service, person, 'Rear Admiral Hopper');
    const got = await deliveredTo(receiver, 2, 'the second rename');
    assert.equal(got.map((event) => event.data.account.name), ['Grace Hopper', 'Rear Admiral Hopper'], 'the same name again was no event');
    const [events] = await context.service.deps.db.query<{ count: string }>(`SELECT count(*) FROM events WHERE type = 'account.updated' AND account_id = $1`, [person.user.id]);
    assert.is(Number(events.count), 2);
  } finally {
    await close();
  }
});

test('the outbox is atomic: an event emitted in a transaction that fails leaves no event and no delivery', async (context) => {
  const { service } = context;
  const { receiver, close } = await endpointFor(context, { events: ['account.deleted'] });
  const accountId = 900_000 + Number.parseInt(randomBytes(2).toString('hex'), 16);
  const countsFor = async () => {
    const [row] = await service.deps.db.query<{ events: string; deliveries: string }>(
      `SELECT (SELECT count(*) FROM events WHERE account_id = $1) AS events, (SELECT count(*) FROM event_deliveries WHERE account_id = $1) AS deliveries`,
      [accountId],
    );
    return { events: Number(row.events), deliveries: Number(row.deliveries) };
  };
  try {
    let inside: unknown;
    const failed = await service.deps.db
      .transaction(async (tx) => {
        await emitEvent(tx, service.clock, { type: 'account.deleted', data: { account_id: accountId } });
        inside = await tx.query('SELECT count(*)::int AS count FROM event_deliveries WHERE account_id = $1', [accountId]);
        throw new Error('the change failed after its event');
      })
      .catch((error: Error) => error.message);
    assert.is(failed, 'the change failed after its event');
    assert.equal(inside, [{ count: 1 }], 'the delivery was written inside the transaction');
    assert.equal(await countsFor(), { events: 0, deliveries: 0 });

    await service.deps.db.transaction((tx) => emitEvent(tx, service.clock, { type: 'account.deleted', data: { account_id: accountId } }));
    assert.equal(await countsFor(), { events: 1, deliveries: 1 });
    const [event] = await deliveredTo(receiver, 1, 'the committed event');
    assert.equal(event.data, { account_id: accountId });
    assert.is(receiver.received.length, 1, 'only the committed one was sent');
  } finally {
    await close();
  }
});

test("an account's event takes the account's ordering lock only while an enabled endpoint wants its type", async (context) => {
  const { service } = context;
  const accountId = 900_000 + Number.parseInt(randomBytes(2).toString('hex'), 16);
  // The lock is a transaction-level advisory lock: seen in pg_locks from inside the transaction that emitted.
  const locksAfterEmitting = () =>
    service.deps.db.transaction(async (tx) => {
      await emitEvent(tx, service.clock, { type: 'account.deleted', data: { account_id: accountId } });
      const [row] = await tx.query<{ count: number }>(`SELECT count(*)::int AS count FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`);
      return row.count;
    });
  assert.is(await locksAfterEmitting(), 0, 'no endpoint: nothing to order, no lock');
  const other = await endpointFor(context, { events: ['account.updated'] });
  try {
    assert.is(await locksAfterEmitting(), 0, 'an endpoint for other types only: no lock');
    const wanting = await endpointFor(context, { events: ['account.deleted'] });
    try {
      assert.is(await locksAfterEmitting(), 1, 'an endpoint wants it: the lock is held to the commit');
      const disabled = await operator(context).updateEventEndpoint({ id: wanting.id, enabled: false });
      assert.is(disabled.endpoint.enabled, false);
      assert.is(await locksAfterEmitting(), 0, 'that endpoint disabled: its deliveries are skipped, no lock');
    } finally {
      await wanting.close();
    }
  } finally {
    await other.close();
  }
});

test.run();
