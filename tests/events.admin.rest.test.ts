import { randomBytes, randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createGatehouseClient, TRPCClientError } from '../client/src/index.ts';
import { assertError, bearer, issuePaths, registerAndVerify, type Account } from './helpers/auth.ts';
import { EventReceiver } from './helpers/event-receiver.ts';
import { request, startTestApp, testFetch, type HttpResult, type TestService } from './helpers/service.ts';
import { trpcOver } from './helpers/trpc-http.ts';
import { eventually } from './helpers/wait.ts';
import { changeName, deliveredTo, endpointFor } from './helpers/event-endpoints.ts';
import { callerFor, post, viberHeaders, viberMessage, viberToken } from './helpers/webhook-fixtures.ts';

// Events out for operators (docs/EVENTS.md, contract section 12) over REST and tRPC: every admin
// route and procedure refused to non-admins, garbage refused with nothing changed, the
// procedures by their tRPC names, secrets and URL credentials kept out of logs, reads recorded
// over both transports, the metrics, and the event a visitor message emits through its webhook.
// The rules of the procedures themselves (paging, updates, deletion, the outbox) are called in
// process in tests/events.admin.caller.test.ts.

const ADMIN = '/api/v1/admin';
const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;
const BOT_TOKEN = `4453b6ac1${randomBytes(6).toString('hex')}-e02c5f12174805f9-daec9cbb5448c51f`;

type Context = { service: TestService; admin: Account; user: Account };
const test = suite<Context>('REST admin: event endpoints and deliveries, for administrators only');

test.before(async (context) => {
  context.service = await startTestApp({ METRICS_TOKEN });
  context.admin = await registerAndVerify(context.service, 'events-operator@example.com');
  await context.service.deps.db.query(`UPDATE accounts SET role = 'admin' WHERE id = $1`, [context.admin.user.id]);
  context.user = await registerAndVerify(context.service, 'events-plain-user@example.com');
});
test.after(async ({ service }) => {
  await service?.close();
});

const admin = (context: Context, method: string, path: string, json?: unknown) =>
  request(context.service.url, method, `${ADMIN}${path}`, { json, headers: bearer(context.admin.token) });
/** A body sent as it is, for what no client would send. */
const adminRaw = (context: Context, method: string, path: string, body: string) =>
  request(context.service.url, method, `${ADMIN}${path}`, { body, headers: { ...bearer(context.admin.token), 'content-type': 'application/json' } });

const fresh = (context: Context, label: string) => registerAndVerify(context.service, `${label}-${randomBytes(3).toString('hex')}@example.com`);

const ping = async (context: Context, id: string): Promise<string> => {
  const tested = await admin(context, 'POST', `/event-endpoints/${id}/test`);
  assert.is(tested.status, 200, tested.text);
  return tested.body.delivery_id;
};

const deliveryState = async (context: Context, id: string) => (await admin(context, 'GET', `/event-deliveries/${id}`)).body.delivery;

/** Everything an admin call could change: the endpoints (secrets included), the outbox and its deliveries. */
async function snapshot(service: TestService): Promise<string> {
  const endpoints = await service.deps.db.query(
    `SELECT id, url, description, events, enabled, secret_sealed, previous_secret_sealed, previous_secret_until, updated_at FROM event_endpoints ORDER BY id`,
  );
  const deliveries = await service.deps.db.query(`SELECT id, endpoint_id, state, attempts, step, next_attempt_at, finished_at FROM event_deliveries ORDER BY seq`);
  const events = await service.deps.db.query(`SELECT id FROM events ORDER BY id`);
  return JSON.stringify({ endpoints, deliveries, events });
}

/** Every events admin route, with a given endpoint and delivery id and an acceptable body. */
const routes = (endpointId: string, deliveryId: string): Array<[string, string, unknown?]> => [
  ['POST', '/event-endpoints', { url: 'https://hooks.example/in' }],
  ['GET', '/event-endpoints'],
  ['PATCH', `/event-endpoints/${endpointId}`, { description: 'x' }],
  ['DELETE', `/event-endpoints/${endpointId}`],
  ['POST', `/event-endpoints/${endpointId}/rotate-secret`, {}],
  ['POST', `/event-endpoints/${endpointId}/retry-dead`, {}],
  ['POST', `/event-endpoints/${endpointId}/test`],
  ['GET', '/event-deliveries'],
  ['GET', `/event-deliveries/${deliveryId}`],
  ['POST', `/event-deliveries/${deliveryId}/retry`],
];

test('every events admin route is 403 FORBIDDEN for a plain user by JWT and by API key, 401 without credentials; nothing changes', async (context) => {
  const { service, user } = context;
  const { id, receiver, close } = await endpointFor(context);
  try {
    const deliveryId = await ping(context, id);
    await deliveredTo(receiver, 1);
    await eventually('the ping recorded', async () => (await deliveryState(context, deliveryId)).state === 'delivered');
    const before = await snapshot(service);
    for (const [method, path, json] of routes(id, deliveryId)) {
      const as = (headers: Record<string, string>) => request(service.url, method, `${ADMIN}${path}`, { json, headers });
      assertError(await as(bearer(user.token)), 403, 'FORBIDDEN');
      assertError(await as(bearer(user.apiKey)), 403, 'FORBIDDEN');
      const anonymous = await as({});
      assertError(anonymous, 401, 'UNAUTHORIZED');
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer/);
    }
    assert.is(await snapshot(service), before);
  } finally {
    await close();
  }
});

/** A 400 VALIDATION_FAILED whose issues name `field` (and nothing else). */
function refused(result: HttpResult, field: string, what: string) {
  assertError(result, 400, 'VALIDATION_FAILED');
  const paths = issuePaths(result);
  assert.ok(paths.length > 0 && paths.every((path) => path === field || path.startsWith(`${field}.`)), `${what}: issues ${JSON.stringify(paths)}, expected ${field}`);
}

test('garbage to every route is a 4xx with the error shape, never a 5xx, and changes nothing', async (context) => {
  const { service } = context;
  const { id, receiver, secret, close } = await endpointFor(context, { description: 'the garbage target' });
  try {
    // A dead delivery, so that a retry let through by mistake would show.
    receiver.mode = 'fail';
    const deliveryId = await ping(context, id);
    await eventually('the failed attempt', async () => (await deliveryState(context, deliveryId)).attempts === 1);
    await service.deps.db.query(`UPDATE event_deliveries SET state = 'dead', finished_at = now() WHERE id = $1`, [deliveryId]);
    const before = await snapshot(service);
    const answers: HttpResult[] = [];
    const check = async (answer: HttpResult, expect: (answer: HttpResult) => void) => {
      answers.push(answer);
      expect(answer);
      assert.is(await snapshot(service), before, `${answer.status} ${answer.text} changed something`);
    };

    // Bodies that are not a JSON object.
    const withBody: Array<[string, string]> = [['POST', '/event-endpoints'], ['PATCH', `/event-endpoints/${id}`], ['POST', `/event-endpoints/${id}/rotate-secret`], ['POST', `/event-endpoints/${id}/retry-dead`], ['POST', `/event-endpoints/${id}/test`], ['POST', `/event-deliveries/${deliveryId}/retry`]];
    for (const [method, path] of withBody) {
      await check(await adminRaw(context, method, path, '{"url": "https://a.example/'), (answer) => assertError(answer, 400, 'INVALID_JSON'));
      await check(await adminRaw(context, method, path, 'url=https://a.example/'), (answer) => assertError(answer, 400, 'INVALID_JSON'));
      await check(await admin(context, method, path, [{ grace_seconds: 60, url: 'https://a.example/' }]), (answer) => assertError(answer, 400, 'VALIDATION_FAILED'));
      await check(await admin(context, method, path, 'https://a.example/'), (answer) => assertError(answer, 400, 'VALIDATION_FAILED'));
    }

    // Fields that are wrong, or unknown.
    const longUrl = `https://hooks.example/${'a'.repeat(2001 - 'https://hooks.example/'.length)}`;
    assert.is(longUrl.length, 2001);
    const badEndpoint: Array<[unknown, string]> = [
      [{ url: 5 }, 'url'],
      [{}, 'url'],
      [{ url: 'ftp://hooks.example/in' }, 'url'],
      [{ url: 'javascript:alert(1)' }, 'url'],
      [{ url: 'http://' }, 'url'],
      [{ url: '/relative/hook' }, 'url'],
      [{ url: 'hooks.example/in' }, 'url'],
      [{ url: longUrl }, 'url'],
      [{ url: 'https://hooks.exa\u0000mple/in' }, 'url'],
      [{ url: 'https://hooks.example/in\r\nX-Injected: 1' }, 'url'],
      [{ url: 'https://hooks.example/in', events: ['account.created', 'account.exploded'] }, 'events'],
      [{ url: 'https://hooks.example/in', events: ['ping'] }, 'events'],
      [{ url: 'https://hooks.example/in', events: ['account.created', 'account.created'] }, 'events'],
      [{ url: 'https://hooks.example/in', events: [] }, 'events'],
      [{ url: 'https://hooks.example/in', events: 'account.created' }, 'events'],
      [{ url: 'https://hooks.example/in', description: 'nul \u0000 here' }, 'description'],
      [{ url: 'https://hooks.example/in', description: 'bell \u0007 here' }, 'description'],
      [{ url: 'https://hooks.example/in', description: 'd'.repeat(501) }, 'description'],
      [{ url: 'https://hooks.example/in', description: 7 }, 'description'],
      [{ url: 'https://hooks.example/in', secret: 'whsec_mine' }, 'secret'],
      [{ url: 'https://hooks.example/in', enabled: false }, 'enabled'],
    ];
    for (const [body, field] of badEndpoint) {
      await check(await admin(context, 'POST', '/event-endpoints', body), (answer) => refused(answer, field, `create ${JSON.stringify(body)}`));
      if ('url' in (body as object) && field !== 'enabled' && field !== 'secret') {
        await check(await admin(context, 'PATCH', `/event-endpoints/${id}`, body), (answer) => refused(answer, field, `patch ${JSON.stringify(body)}`));
      }
    }
    for (const [body, field] of [[{ enabled: 'yes' }, 'enabled'], [{ colour: 'red' }, 'colour'], [{ events: [] }, 'events'], [{ url: null }, 'url']] as const) {
      await check(await admin(context, 'PATCH', `/event-endpoints/${id}`, body), (answer) => refused(answer, field, `patch ${JSON.stringify(body)}`));
    }
    // A misspelt grace_seconds must never rotate the key with no grace.
    for (const [body, field] of [[{ grace_second: 600 }, 'grace_second'], [{ grace_seconds: -1 }, 'grace_seconds'], [{ grace_seconds: 86_401 }, 'grace_seconds'], [{ grace_seconds: 1.5 }, 'grace_seconds'], [{ grace_seconds: '10' }, 'grace_seconds'], [{ grace_seconds: null }, 'grace_seconds']] as const) {
      await check(await admin(context, 'POST', `/event-endpoints/${id}/rotate-secret`, body), (answer) => refused(answer, field, `rotate ${JSON.stringify(body)}`));
    }
    for (const [body, field] of [[{ since: 'yesterday' }, 'since'], [{ since: 5 }, 'since'], [{ state: 'dead' }, 'state']] as const) {
      await check(await admin(context, 'POST', `/event-endpoints/${id}/retry-dead`, body), (answer) => refused(answer, field, `retry-dead ${JSON.stringify(body)}`));
    }
    await check(await admin(context, 'POST', `/event-endpoints/${id}/test`, { type: 'account.created' }), (answer) => refused(answer, 'type', 'test'));
    await check(await admin(context, 'POST', `/event-deliveries/${deliveryId}/retry`, { force: true }), (answer) => refused(answer, 'force', 'retry'));

    // Ids in the path: a non-UUID is 400 naming id, an unknown UUID 404, a control character 400.
    for (const [method, path, json] of routes('not-a-uuid', 'not-a-uuid').filter(([, path]) => path.includes('not-a-uuid'))) {
      await check(await admin(context, method, path, json), (answer) => refused(answer, 'id', `${method} ${path}`));
      await check(await admin(context, method, path.replace('not-a-uuid', `${randomUUID()}`), json), (answer) => assertError(answer, 404, 'NOT_FOUND'));
      await check(await admin(context, method, path.replace('not-a-uuid', `${id.slice(0, 8)}%00`), json), (answer) => assertError(answer, 400, 'VALIDATION_FAILED'));
      await check(await admin(context, method, path.replace('not-a-uuid', `${id}'--`), json), (answer) => refused(answer, 'id', `${method} ${path} quote`));
    }

    // The deliveries list's query.
    const forged = Buffer.from('d:1 OR 1=1').toString('base64url');
    for (const [query, field] of [['state=bogus', 'state'], ['state=', 'state'], ['limit=0', 'limit'], ['limit=201', 'limit'], ['limit=abc', 'limit'], ['limit=2.5', 'limit'], ['cursor=not-ours', 'cursor'], [`cursor=${forged}`, 'cursor'], [`cursor=${'c'.repeat(201)}`, 'cursor'], ['endpoint_id=not-a-uuid', 'endpoint_id'], ['type=account.exploded', 'type'], ['colour=red', 'colour']]) {
      await check(await admin(context, 'GET', `/event-deliveries?${query}`), (answer) => refused(answer, field, query));
    }

    // DELETE takes no body (as DELETE /auth/sessions/{id}); a stray query parameter is refused.
    await check(await admin(context, 'DELETE', `/event-endpoints/${id}?colour=red`), (answer) => refused(answer, 'colour', 'delete ?colour'));
    // A route without input ignores the query string, as GET /auth/me does (a cache-buster is harmless).
    const listed = await admin(context, 'GET', '/event-endpoints?_=1700000000');
    assert.is(listed.status, 200, listed.text);
    assert.is(await snapshot(service), before);

    assert.ok(answers.every((answer) => answer.status >= 400 && answer.status < 500));
    assert.not.ok(answers.some((answer) => answer.text.includes(secret.slice(6))), 'no secret in an error');
    assert.is((await snapshot(service)), before);
  } finally {
    await close();
  }
});

test('the procedures by their contract names over tRPC: the typed client as admin, FORBIDDEN for a plain user', async (context) => {
  const { service, user } = context;
  const receiver = await EventReceiver.start();
  const client = createGatehouseClient({ fetch: testFetch, url: `${service.url}/trpc`, token: context.admin.token }).admin;
  try {
    const created = await client.createEventEndpoint.mutate({ url: receiver.url, events: ['account.updated'], description: 'over tRPC' });
    const id = created.endpoint.id;
    assert.equal(created.endpoint.events, ['account.updated']);
    assert.ok((await client.eventEndpoints.query()).items.some((item) => item.id === id && item.description === 'over tRPC'));
    assert.is((await client.updateEventEndpoint.mutate({ id, description: 'renamed' })).endpoint.description, 'renamed');
    // An unknown field is refused over tRPC as over REST, and does not rotate.
    const sealed = async () => (await service.deps.db.query<{ s: string }>('SELECT secret_sealed AS s FROM event_endpoints WHERE id = $1', [id]))[0].s;
    const sealedBefore = await sealed();
    const misspelt = await client.rotateEventEndpointSecret.mutate({ id, grace_second: 60 } as never).catch((error: unknown) => error);
    assert.instance(misspelt, TRPCClientError);
    assert.is((misspelt as TRPCClientError<any>).data?.appCode, 'VALIDATION_FAILED');
    assert.is(await sealed(), sealedBefore);
    const { secret } = await client.rotateEventEndpointSecret.mutate({ id, grace_seconds: 0 });
    assert.is.not(secret, created.secret);
    receiver.secrets = [secret];

    const { delivery_id } = await client.testEventEndpoint.mutate({ id });
    const [pinged] = await deliveredTo(receiver, 1, 'the ping, signed with the new secret');
    assert.is(pinged.type, 'ping');
    await eventually('the ping delivered', async () => (await client.eventDelivery.query({ id: delivery_id })).delivery.state === 'delivered');
    const listed = await client.eventDeliveries.query({ endpoint_id: id });
    assert.equal(listed.items.map((item) => item.id), [delivery_id]);
    const shown = (await client.eventDelivery.query({ id: delivery_id })).delivery;
    assert.equal(JSON.parse(shown.body).data, {});
    assert.is(shown.attempts_log.length, 1);
    assert.equal(await client.retryEventDelivery.mutate({ id: delivery_id }), { success: true });
    const again = await deliveredTo(receiver, 2, 'the retried ping');
    assert.is(again[1].id, pinged.id, 'the same webhook-id');
    assert.equal(await client.retryDeadEventDeliveries.mutate({ id }), { success: true, retried: 0 });
    assert.equal(await client.deleteEventEndpoint.mutate({ id }), { success: true });
    assert.not.ok((await client.eventEndpoints.query()).items.some((item) => item.id === id));

    const plain = createGatehouseClient({ fetch: testFetch, url: `${service.url}/trpc`, token: user.token }).admin;
    const anyId = { id: randomUUID() };
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['createEventEndpoint', () => plain.createEventEndpoint.mutate({ url: receiver.url })],
      ['eventEndpoints', () => plain.eventEndpoints.query()],
      ['updateEventEndpoint', () => plain.updateEventEndpoint.mutate({ ...anyId, enabled: false })],
      ['rotateEventEndpointSecret', () => plain.rotateEventEndpointSecret.mutate(anyId)],
      ['deleteEventEndpoint', () => plain.deleteEventEndpoint.mutate(anyId)],
      ['eventDeliveries', () => plain.eventDeliveries.query({})],
      ['eventDelivery', () => plain.eventDelivery.query(anyId)],
      ['retryEventDelivery', () => plain.retryEventDelivery.mutate(anyId)],
      ['retryDeadEventDeliveries', () => plain.retryDeadEventDeliveries.mutate(anyId)],
      ['testEventEndpoint', () => plain.testEventEndpoint.mutate(anyId)],
    ];
    for (const [name, call] of calls) {
      const error = await call().then(() => assert.unreachable(`${name} answered a plain user`), (failure: unknown) => failure);
      assert.instance(error, TRPCClientError);
      assert.is((error as TRPCClientError<any>).data?.appCode, 'FORBIDDEN', name);
      assert.is((error as TRPCClientError<any>).data?.httpStatus, 403, name);
    }
    // The server-side caller and the wire say the same.
    const caller = callerFor(service, { id: user.user.id, email: user.email, token: user.token });
    await caller.admin.eventEndpoints().then(() => assert.unreachable(), (error: { code?: string }) => assert.is(error.code, 'FORBIDDEN'));
    const wire = await trpcOver(service).query(user, 'admin.eventDeliveries', {});
    assert.is(wire.status, 403);
    assert.is(wire.body.error.data.appCode, 'FORBIDDEN');
  } finally {
    await receiver.close();
  }
});

test('an endpoint changed and removed over REST: PATCH answers the endpoint as it now is, DELETE {success: true}, then 404', async (context) => {
  const { id, close } = await endpointFor(context, { events: ['account.created'], description: 'before' });
  try {
    const patched = await admin(context, 'PATCH', `/event-endpoints/${id}`, { events: ['account.updated'], description: null });
    assert.is(patched.status, 200, patched.text);
    assert.equal(Object.keys(patched.body).sort(), ['endpoint', 'success']);
    assert.equal([patched.body.endpoint.id, patched.body.endpoint.events, patched.body.endpoint.description], [id, ['account.updated'], null]);
    const listed = (await admin(context, 'GET', '/event-endpoints')).body.items.find((item: { id: string }) => item.id === id);
    assert.equal(listed, patched.body.endpoint);

    const removed = await admin(context, 'DELETE', `/event-endpoints/${id}`);
    assert.is(removed.status, 200, removed.text);
    assert.equal(removed.body, { success: true });
    assertError(await admin(context, 'DELETE', `/event-endpoints/${id}`), 404, 'NOT_FOUND');
  } finally {
    await close();
  }
});

test('secrets never reach the logs or an error; a URL with credentials is refused; the query is sent but never logged or recorded', async (context) => {
  const { service } = context;
  const person = await fresh(context, 'credentials');
  const plain = await endpointFor(context);
  const withQuery = await endpointFor(context, { events: ['account.updated'] }, (receiver) => `${receiver.url}?token=abc`);
  const closedPort = await admin(context, 'POST', '/event-endpoints', { url: 'http://127.0.0.1:9/hooks?token=abc', events: ['account.updated'] });
  assert.is(closedPort.status, 201, closedPort.text);
  const unreachable = closedPort.body.endpoint.id as string;
  try {
    const rotated = await admin(context, 'POST', `/event-endpoints/${plain.id}/rotate-secret`, { grace_seconds: 600 });
    assert.is(rotated.status, 200, rotated.text);
    plain.receiver.secrets = [rotated.body.secret];
    const pinged = await ping(context, plain.id);
    await deliveredTo(plain.receiver, 1);
    // Recorded as delivered too, after the receiver had it: else the record changes under the snapshot below.
    await eventually('the ping recorded', async () => (await deliveryState(context, pinged)).state === 'delivered');
    assertError(await admin(context, 'POST', `/event-endpoints/${plain.id}/rotate-secret`, { grace_second: 1 }), 400, 'VALIDATION_FAILED');

    // A receiver authenticates by the signature: credentials in the URL are refused, and not echoed.
    const before = await snapshot(service);
    for (const url of [withQuery.receiver.url.replace('http://', 'http://user:pass@'), 'https://ops:hunter2@hooks.example/in', 'http://:pass@127.0.0.1:9/']) {
      const created = await admin(context, 'POST', '/event-endpoints', { url });
      refused(created, 'url', url);
      assert.match(created.body.issues[0].message, /credentials/);
      const patched = await admin(context, 'PATCH', `/event-endpoints/${plain.id}`, { url });
      refused(patched, 'url', url);
      for (const answer of [created, patched]) assert.not.match(answer.text, /\bpass\b|hunter2/);
    }
    assert.is(await snapshot(service), before);

    await ping(context, withQuery.id);
    await changeName(context.service, person, 'Queried Receiver');
    const got = await deliveredTo(withQuery.receiver, 2, 'the ping and the change, at the URL with a query');
    assert.equal(got.map((event) => event.type).sort(), ['account.updated', 'ping']);
    for (const seen of withQuery.receiver.received) {
      assert.is(seen.path, '/hooks?token=abc', 'the query is sent');
      assert.is(seen.headers.authorization, undefined, 'no credentials are sent');
    }
    const failed = await eventually('the attempt at a closed port', async () => {
      const [row] = (await admin(context, 'GET', `/event-deliveries?endpoint_id=${unreachable}`)).body.items;
      return row?.attempts >= 1 ? row : undefined;
    });
    assert.match(failed.last_error, /^connection failed/);

    const logs = service.logs.text();
    for (const secret of [plain.secret, rotated.body.secret, withQuery.secret]) {
      assert.not.ok(logs.includes(secret.slice(6)), 'no secret in the logs');
    }
    assert.not.match(logs, /\bpass\b|hunter2/);
    assert.not.ok(logs.includes('token=abc'));
    const shown = await admin(context, 'GET', `/event-deliveries/${failed.id}`);
    assert.not.match(shown.text, /token=abc/);
    const audit = await service.deps.db.query<{ event: string; data: string }>(`SELECT event, data::text AS data FROM audit_events WHERE event LIKE 'admin.event%'`);
    assert.ok(audit.some((row) => row.event === 'admin.event_endpoint_created' && row.data.includes(`${new URL(withQuery.receiver.url).host}/hooks`)));
    assert.ok(audit.every((row) => !/pass|hunter2|token=abc/.test(row.data)), 'no credentials or query in the activity log');
    assert.ok(audit.every((row) => !row.data.includes(plain.secret.slice(6)) && !row.data.includes(rotated.body.secret.slice(6))));
  } finally {
    await plain.close();
    await withQuery.close();
    await admin(context, 'DELETE', `/event-endpoints/${unreachable}`);
  }
});

test("every read of endpoints and deliveries is recorded in the reading admin's activity, endpoint lists included", async (context) => {
  const { service } = context;
  const { id, receiver, close } = await endpointFor(context);
  try {
    const deliveryId = await ping(context, id);
    await deliveredTo(receiver, 1);
    const [{ mark }] = await service.deps.db.query<{ mark: string }>('SELECT coalesce(max(id), 0)::text AS mark FROM audit_events');
    const client = createGatehouseClient({ fetch: testFetch, url: `${service.url}/trpc`, token: context.admin.token }).admin;
    assert.is((await admin(context, 'GET', '/event-endpoints')).status, 200);
    assert.ok((await client.eventEndpoints.query()).items.length >= 1);
    assert.is((await admin(context, 'GET', `/event-deliveries?endpoint_id=${id}`)).status, 200);
    assert.is((await admin(context, 'GET', `/event-deliveries/${deliveryId}`)).status, 200);
    const recorded = await service.deps.db.query<{ account_id: number; event: string; data: any }>('SELECT account_id, event, data FROM audit_events WHERE id > $1 ORDER BY id', [mark]);
    assert.equal(recorded.map((row) => row.event), ['admin.event_endpoints_read', 'admin.event_endpoints_read', 'admin.event_deliveries_read', 'admin.event_deliveries_read']);
    assert.ok(recorded.every((row) => row.account_id === context.admin.user.id), 'in the reading admin\'s log');
    assert.equal(recorded[0].data.what, 'list');
    assert.equal(recorded[3].data, { what: 'delivery', delivery: deliveryId });
    // A refused read records nothing: a plain user's list is 403.
    assertError(await request(service.url, 'GET', `${ADMIN}/event-endpoints`, { headers: bearer(context.user.token) }), 403, 'FORBIDDEN');
    const [{ count }] = await service.deps.db.query<{ count: number }>('SELECT count(*)::int AS count FROM audit_events WHERE id > $1', [mark]);
    assert.is(count, 4);
  } finally {
    await close();
  }
});

/** A sample's value in the Prometheus text of GET /metrics, 0 when it is not there yet. */
async function metric(service: TestService, sample: string): Promise<number> {
  const answer = await request(service.url, 'GET', '/metrics', { headers: bearer(METRICS_TOKEN) });
  assert.is(answer.status, 200, answer.text);
  const line = answer.text.split('\n').find((text) => text.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

test('metrics count delivered pings, and the oldest pending delivery waits on the service clock', async (context) => {
  const { service } = context;
  const delivered = 'event_deliveries_total{type="ping",outcome="delivered"}';
  const good = await endpointFor(context);
  const failing = await endpointFor(context);
  try {
    assert.is((await request(service.url, 'GET', '/metrics')).status, 401);
    const before = await metric(service, delivered);
    await ping(context, good.id);
    await deliveredTo(good.receiver, 1);
    await eventually('the delivered ping counted', async () => (await metric(service, delivered)) === before + 1);
    // The gauge reads the database at most every 5 s of the service clock: each look moves it on.
    const freshOldestPending = async () => {
      service.clock.advance(5_000);
      return metric(service, 'event_oldest_pending_seconds');
    };
    await eventually('nothing pending', async () => (await freshOldestPending()) === 0);

    failing.receiver.mode = 'fail';
    const stuck = await ping(context, failing.id);
    await eventually('the failed attempt', async () => (await deliveryState(context, stuck)).attempts === 1);
    service.clock.advance(120_000);
    await eventually('the retry failed too', async () => (await deliveryState(context, stuck)).attempts === 2);
    const age = await metric(service, 'event_oldest_pending_seconds');
    assert.ok(age >= 120 && age < 200, `oldest pending ${age} s`);
    assert.ok((await metric(service, 'event_deliveries_total{type="ping",outcome="retry"}')) >= 2);

    await failing.close();
    assert.is(await metric(service, 'event_oldest_pending_seconds'), age, 'within 5 s of the service clock a scrape reads no database');
    await eventually('none waits any more', async () => (await freshOldestPending()) === 0);
  } finally {
    await good.close();
    await failing.close();
  }
});

test('a visitor message is message.received; the same message again, or replayed, is no second event', async (context) => {
  const { service } = context;
  const owner = await fresh(context, 'channel-owner');
  const caller = callerFor(service, { id: owner.user.id, email: owner.email, token: owner.token });
  const channel = await caller.channels.create({ platform: 'messengertwo', name: 'Events shop', botToken: BOT_TOKEN });
  const { receiver, close } = await endpointFor(context, { events: ['message.received'] });
  const deliver = (payload: string) => post(service, `/messengertwo/bot/${channel.channelId}`, payload, viberHeaders(payload, BOT_TOKEN));
  try {
    const token = viberToken(Number.parseInt(randomBytes(2).toString('hex'), 16));
    const payload = viberMessage(token, { id: 'U-events=', name: 'Vera' }, 'Is the blue one in stock?');
    assert.is((await deliver(payload)).status, 200);
    const [event] = await deliveredTo(receiver, 1, 'message.received');
    assert.is(event.type, 'message.received');
    assert.equal(event.data, { channel_id: channel.channelId, account_id: owner.user.id, conversation_id: 'U-events=', external_user_id: 'U-events=', text: 'Is the blue one in stock?' });

    assert.is((await deliver(payload)).status, 200);
    const [inbox] = await service.deps.db.query<{ id: string }>(`SELECT id FROM webhook_inbox WHERE provider = 'messengertwo' AND external_id = $1`, [token]);
    assertError(await request(service.url, 'POST', `${ADMIN}/inbox/${inbox.id}/replay`, { json: {}, headers: bearer(context.user.token) }), 403, 'FORBIDDEN');
    const replayed = await admin(context, 'POST', `/inbox/${inbox.id}/replay`, {});
    assert.is(replayed.status, 200, replayed.text);
    await eventually('the replay applied', async () => {
      const [row] = await service.deps.db.query<{ state: string }>('SELECT state FROM webhook_inbox WHERE id = $1', [inbox.id]);
      return row.state !== 'received';
    });
    // A later message goes after whatever the repeat and the replay could have emitted.
    assert.is((await deliver(viberMessage(viberToken(70_000), { id: 'U-events=', name: 'Vera' }, 'And in red?'))).status, 200);
    await deliveredTo(receiver, 2, 'the later message');
    assert.equal(receiver.delivered().map((seen) => seen.data.text), ['Is the blue one in stock?', 'And in red?']);
    const [events] = await service.deps.db.query<{ count: string }>(`SELECT count(*) FROM events WHERE type = 'message.received' AND account_id = $1`, [owner.user.id]);
    assert.is(Number(events.count), 2);
  } finally {
    await close();
  }
});

test.run();
