import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { secretPlace } from '../server/src/modules/events/index.ts';
import { assertError, bearer, issuePaths, registerAdmin, type Account } from './helpers/auth.ts';
import { EventReceiver } from './helpers/event-receiver.ts';
import { TestResolver } from './helpers/resolver.ts';
import { request, startTestApp, type HttpResult, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// Where events may go (docs/EVENTS.md): an operator's endpoint must not make the sender a
// way into the service's own network. The service runs as production does by default, with
// no range opened (EVENTS_ALLOWED_NETWORKS=none), and a resolver that gives the test's names
// the answers an attacker would: private ones, a public one that turns private before the
// send, none at all. Real receivers on 127.0.0.1 show that nothing reaches them.

const ADMIN = '/api/v1/admin';
/** A public address nothing is ever sent to: each name that answers it turns private before a send. */
const PUBLIC = '93.184.215.14';
const SETTING = 'EVENTS_ALLOWED_NETWORKS';

type Context = { service: TestService; admin: Account; resolver: TestResolver };
const test = suite<Context>('events out: only public addresses, checked at create, update and every send');

test.before(async (context) => {
  context.resolver = new TestResolver()
    .answer('public.test', [PUBLIC])
    .answer('metadata.google.internal', ['169.254.169.254'])
    .answer('internal.test', ['10.0.0.5'])
    .answer('loopback.test', ['127.0.0.1'])
    .answer('v6-private.test', ['fd00::5'])
    .answer('mixed.test', [PUBLIC, '10.0.0.5'])
    .answer('mapped.test', ['::ffff:169.254.169.254'])
    .hang('slow.test');
  context.service = await startTestApp({ [SETTING]: 'none' }, { resolver: context.resolver });
  context.admin = await registerAdmin(context.service, 'targets-admin@example.com');
});
test.after(async ({ service }) => {
  await service?.close();
});

const admin = (context: Context, method: string, path: string, json?: unknown) =>
  request(context.service.url, method, `${ADMIN}${path}`, { json, headers: bearer(context.admin.token) });

const endpointCount = async (service: TestService) => (await service.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM event_endpoints'))[0].n;

/** A 400 VALIDATION_FAILED naming `url` alone, with its message. */
function refusedUrl(answer: HttpResult, what: string): string {
  assertError(answer, 400, 'VALIDATION_FAILED');
  assert.equal(issuePaths(answer), ['url'], `${what}: ${answer.text}`);
  return answer.body.issues[0].message as string;
}

/** Link-local, where cloud metadata answers: refused, and no setting is offered that would open it. */
const LINK_LOCAL = [
  'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
  'http://[fe80::1]/',
  'http://[::ffff:169.254.169.254]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://2852039166/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://mapped.test/',
];
/** Ranges a receiver inside the operators' network may be in: refused, naming the setting that opens them. */
const IN_NETWORK = [
  'http://10.0.0.1/',
  'http://172.16.5.4:8080/hooks',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://127.0.0.1:9/',
  'http://127.1/',
  'http://2130706433/',
  'http://0x7f.0.0.1/',
  'http://0177.0.0.1/',
  'http://%31%32%37.0.0.1/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::127.0.0.1]/',
  'http://[2002:a00:1::]/',
  'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
  'http://[fc00::1]/',
  'http://[fd12:3456::1]/',
  'http://internal.test/',
  'http://loopback.test:8080/',
  'http://v6-private.test/',
  'http://mixed.test/',
];
/** Addresses no receiver is at. */
const SPECIAL = ['http://0.0.0.0/', 'http://[::]/', 'http://224.0.0.1/', 'http://255.255.255.255/', 'http://192.0.2.10/', 'http://198.51.100.1/', 'http://203.0.113.5/', 'http://240.0.0.1/', 'http://[2001:db8::1]/', 'http://[ff02::1]/'];

test('every private, loopback, link-local and special address, however written, is refused at create and update; nothing is stored', async (context) => {
  const { service } = context;
  const kept = await admin(context, 'POST', '/event-endpoints', { url: 'https://public.test/in', events: ['payment.updated'] });
  assert.is(kept.status, 201, kept.text);
  const id = kept.body.endpoint.id as string;
  try {
    const before = await endpointCount(service);
    const check = async (url: string) => {
      const created = refusedUrl(await admin(context, 'POST', '/event-endpoints', { url }), `create ${url}`);
      const updated = refusedUrl(await admin(context, 'PATCH', `/event-endpoints/${id}`, { url }), `update ${url}`);
      assert.is(updated, created, 'create and update say the same');
      return created;
    };
    for (const url of LINK_LOCAL) {
      const message = await check(url);
      assert.match(message, /169\.254\.169\.254|fe80::1/, `${url}: ${message}`);
      assert.match(message, 'link-local', `${url}: ${message}`);
      assert.not.match(message, SETTING, `${url}: no setting opens link-local`);
    }
    for (const url of IN_NETWORK) {
      const message = await check(url);
      assert.match(message, /loopback|private|shared/, `${url}: ${message}`);
      assert.match(message, SETTING, `${url}: the refusal names the setting that opens it`);
    }
    for (const url of SPECIAL) {
      const message = await check(url);
      assert.match(message, /public addresses only/, `${url}: ${message}`);
    }
    assert.match(await check('http://nowhere.test/'), /does not resolve/);
    assert.match(await check('https://user:pass@public.test/in'), /credentials/);
    assert.match(await check('https://:token@public.test/in'), /credentials/);
    assert.is(await endpointCount(service), before, 'nothing was stored');
    const [row] = await service.deps.db.query<{ url: string }>('SELECT url FROM event_endpoints WHERE id = $1', [id]);
    assert.is(row.url, 'https://public.test/in', 'nothing was changed');
  } finally {
    await admin(context, 'DELETE', `/event-endpoints/${id}`);
  }
});

test('a name that does not answer within 2 s is refused as not resolving, and holds the request up no longer', async (context) => {
  const started = Date.now();
  const message = refusedUrl(await admin(context, 'POST', '/event-endpoints', { url: 'https://slow.test/in' }), 'slow.test');
  assert.match(message, /does not resolve/);
  const took = Date.now() - started;
  assert.ok(took >= 1_900 && took < 6_000, `${took} ms`);
});

/** The delivery of a ping to `id`, once its first attempt is recorded. */
async function firstAttemptOf(context: Context, id: string) {
  const tested = await admin(context, 'POST', `/event-endpoints/${id}/test`);
  assert.is(tested.status, 200, tested.text);
  return eventually('the attempt recorded', async () => {
    const delivery = (await admin(context, 'GET', `/event-deliveries/${tested.body.delivery_id}`)).body.delivery;
    return delivery.attempts >= 1 ? delivery : undefined;
  });
}

test('a name that was public at create and is private at send (DNS rebinding): the attempt fails saying why, and nothing reaches the address', async (context) => {
  const { resolver } = context;
  const receiver = await EventReceiver.start();
  // Were it reached, its answer's body would be kept for the operators to read.
  receiver.mode = 'fail';
  const port = new URL(receiver.url).port;
  resolver.answer('rebind.test', [PUBLIC]);
  const created = await admin(context, 'POST', '/event-endpoints', { url: `http://rebind.test:${port}/hooks`, events: ['payment.updated'] });
  assert.is(created.status, 201, created.text);
  const id = created.body.endpoint.id as string;
  try {
    resolver.answer('rebind.test', ['127.0.0.1']);
    const loopback = await firstAttemptOf(context, id);
    assert.is(loopback.last_status, null);
    assert.match(loopback.last_error, /^not sent: the URL has a host that resolves to 127\.0\.0\.1, a loopback address/);
    assert.match(loopback.last_error, SETTING);
    assert.not.match(loopback.last_error, 'receiver is down');
    assert.is(loopback.attempts_log[0].status, null);

    resolver.answer('rebind.test', [PUBLIC, '169.254.169.254']);
    const metadata = await firstAttemptOf(context, id);
    assert.match(metadata.last_error, /^not sent: .*169\.254\.169\.254, a link-local address/);

    resolver.answer('rebind.test', ['::ffff:127.0.0.1']);
    const mapped = await firstAttemptOf(context, id);
    assert.match(mapped.last_error, /^not sent: .*which holds 127\.0\.0\.1, a loopback address/);

    resolver.answer('rebind.test', []);
    const gone = await firstAttemptOf(context, id);
    assert.match(gone.last_error, /^not sent: .*does not resolve/);
    assert.is(receiver.received.length, 0, 'no request reached the receiver');
  } finally {
    await admin(context, 'DELETE', `/event-endpoints/${id}`);
    await receiver.close();
  }
});

test('garbage URLs are a 4xx with the error body, never a 5xx, and store nothing', async (context) => {
  const { service } = context;
  const before = await endpointCount(service);
  const garbage: unknown[] = [
    'http://[::1', 'http://[::ffff:127.0.0.1', 'http://[fe80::1%25eth0]/', 'http://127.0.0.1:99999/', 'http://127.0.0.1:-1/', 'http:///x',
    'http://%00/', 'http://a\u0000b/', 'http://exa mple.test/', `http://${'a'.repeat(64)}.test/`, `http://${'a.'.repeat(900)}test/`,
    'http://xn--/', 'http://xn--nxasmq6b/', 'http://①②⑦.0.0.1/', 'http://０x7f.1/', 'http://localhost/', 'http://LOCALHOST./', 'http://127.0.0.1.nip.io/',
    'http://public.test@169.254.169.254/', 'http://169.254.169.254#@public.test/', 'http://169.254.169.254\\@public.test/',
    'gopher://public.test/', 'file:///etc/passwd', 'data:text/plain,hi', '//public.test/', '',
    ['http://public.test/'], { href: 'http://public.test/' }, 12, null, true,
  ];
  for (const url of garbage) {
    const answer = await admin(context, 'POST', '/event-endpoints', { url, events: ['payment.updated'] });
    assert.ok(answer.status >= 400 && answer.status < 500, `${JSON.stringify(url)}: ${answer.status} ${answer.text}`);
    assertError(answer, answer.status, answer.body.code);
  }
  assert.is(await endpointCount(service), before);
});

/** A proxy stand-in that counts the connections it is offered. */
async function startProxy() {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

test('one line opens a range for receivers inside the network; link-local stays shut; endpoints stored before the rules are warned of at start', async (context) => {
  const { resolver } = context;
  const inside = await EventReceiver.start();
  const stored = await EventReceiver.start();
  const elsewhere = await EventReceiver.start();
  const proxy = await startProxy();
  const proxyVariables = ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy'];
  const savedProxies = proxyVariables.map((name) => [name, process.env[name]] as const);
  // Endpoints an older version accepted, each breaking a rule: credentials, a private address, the metadata service.
  const older = [
    { id: randomUUID(), url: `http://ops:hunter2@127.0.0.1:${new URL(stored.url).port}/hooks?token=abc` },
    { id: randomUUID(), url: 'http://10.1.2.3/hooks' },
    { id: randomUUID(), url: 'http://metadata.google.internal/computeMetadata/v1/' },
  ];
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  for (const { id, url } of older) {
    await context.service.deps.db.query(
      `INSERT INTO event_endpoints (id, url, events, secret_sealed, created_at, updated_at) VALUES ($1, $2, '{payment.updated}', $3, now(), now())`,
      [id, url, context.service.deps.secretBox.seal(secret, secretPlace(id))],
    );
  }
  refusedUrl(await admin(context, 'POST', '/event-endpoints', { url: inside.url }), 'before the setting');

  context.service = await context.service.restart({ [SETTING]: '127.0.0.0/8, 10.1.0.0/16, 169.254.0.0/16' });
  const { service } = context;
  try {
    const warnings = await eventually('a warning for each endpoint stored before the rules', () => {
      const lines = service.logs.lines.map((line) => JSON.parse(line)).filter((line) => line.level === 'warn' && /event endpoint breaks the rules/.test(line.msg));
      return lines.length >= 2 ? lines : undefined;
    });
    assert.equal(warnings.map((line) => line.endpoint).sort(), [older[0].id, older[2].id].sort(), 'the private one is in the opened range now');
    assert.match(warnings.find((line) => line.endpoint === older[0].id).reason, /credentials/);
    assert.match(warnings.find((line) => line.endpoint === older[2].id).reason, /link-local/);
    assert.ok(service.logs.lines.some((line) => /EVENTS_ALLOWED_NETWORKS holds link-local/.test(line)), 'the setting itself is warned of');
    assert.not.match(service.logs.text(), /hunter2|token=abc/);

    // The opened range: a receiver on it, by address and by a name that resolves to it.
    const byAddress = await admin(context, 'POST', '/event-endpoints', { url: inside.url, events: ['payment.updated'] });
    assert.is(byAddress.status, 201, byAddress.text);
    resolver.answer('receiver.test', ['127.0.0.1']);
    const byName = await admin(context, 'POST', '/event-endpoints', { url: inside.url.replace('127.0.0.1', 'receiver.test'), events: ['payment.updated'] });
    assert.is(byName.status, 201, byName.text);
    inside.secrets = [byAddress.body.secret, byName.body.secret];
    for (const name of proxyVariables) process.env[name] = proxy.url;
    for (const endpoint of [byAddress, byName]) {
      const tested = await admin(context, 'POST', `/event-endpoints/${endpoint.body.endpoint.id}/test`);
      assert.is(tested.status, 200, tested.text);
    }
    const got = await eventually('both pings', () => (inside.verifiedIds().length >= 2 ? inside.received : undefined));
    assert.equal(got.map((seen) => seen.headers.host).sort(), [new URL(inside.url).host, new URL(inside.url).host.replace('127.0.0.1', 'receiver.test')].sort());
    assert.is(proxy.connections(), 0, 'no proxy of the environment is used');

    // Link-local stays refused, whatever the setting says.
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://metadata.google.internal/']) {
      assert.match(refusedUrl(await admin(context, 'POST', '/event-endpoints', { url }), url), 'link-local');
    }
    // The stored ones fail to send as they would be refused; the one with credentials reaches nothing.
    const [credentialed, , metadata] = older;
    assert.match((await firstAttemptOf(context, credentialed.id)).last_error, /^not sent: the URL must not hold credentials/);
    assert.match((await firstAttemptOf(context, metadata.id)).last_error, /^not sent: .*link-local/);
    assert.is(stored.received.length, 0);

    // A redirect is an answer, not followed: to a private address or anywhere.
    inside.mode = 'redirect';
    inside.redirectTo = elsewhere.url;
    const redirected = await firstAttemptOf(context, byAddress.body.endpoint.id);
    assert.is(redirected.last_status, 307);
    assert.match(redirected.last_error, /^HTTP 307/);
    assert.is(elsewhere.received.length, 0);
  } finally {
    for (const [name, value] of savedProxies) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await inside.close();
    await stored.close();
    await elsewhere.close();
    await proxy.close();
  }
});

test.run();
