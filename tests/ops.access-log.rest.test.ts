import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, bearer, login, me, registerAndVerify, type Account } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';

// The access log (docs/OPERATIONS.md, Access log): one JSON line per request at info, with the route's
// pattern and the account when a procedure authenticated the caller; never a query string,
// token or key. ACCESS_LOG=off silences it, but not a 5xx.

type Context = { service: TestService; account: Account; secrets: Set<string> };
const test = suite<Context>('access log: one info line per request');

test.before(async (context) => {
  // The default level: the access log must show without turning on debug.
  context.service = await startTestApp({ LOG_LEVEL: 'info' });
  context.account = await registerAndVerify(context.service, 'access.log@example.com');
  const { account } = context;
  context.secrets = new Set([account.password, account.token, account.apiKey]);
});
test.after(async ({ service }) => {
  await service?.close();
});

type Line = Record<string, unknown>;

const FIELDS = ['level', 'method', 'ms', 'msg', 'path', 'requestId', 'route', 'service', 'status', 'time'];
const WITH_ACCOUNT = [...FIELDS, 'accountId'].sort();

/** The access log lines of one request, found by the request id it was sent with. */
function requestLines(service: TestService, requestId: string): Line[] {
  return service.logs.lines.map((line) => JSON.parse(line) as Line).filter((line) => line.msg === 'request' && line.requestId === requestId);
}

/** The one line of the request sent with `requestId`, after checking its fields. */
function theLine(service: TestService, requestId: string): Line {
  const lines = requestLines(service, requestId);
  assert.is(lines.length, 1, `one line for ${requestId}`);
  const [line] = lines;
  assert.equal(Object.keys(line).sort(), line.accountId === undefined ? FIELDS : WITH_ACCOUNT);
  assert.type(line.ms, 'number');
  assert.ok((line.ms as number) >= 0);
  return line;
}

let sequence = 0;
const traced = (label: string) => `${label}-${++sequence}`;

function send(service: TestService, method: string, path: string, requestId: string, options: { json?: unknown; headers?: Record<string, string> } = {}) {
  return request(service.url, method, path, { ...options, headers: { ...options.headers, 'x-request-id': requestId } });
}

test('one info line per request, with exactly requestId, method, route, path, status and ms', async ({ service }) => {
  const id = traced('health');
  const answer = await send(service, 'GET', '/healthz', id);
  assert.is(answer.headers.get('x-request-id'), id);
  const line = theLine(service, id);
  assert.equal(
    { level: line.level, requestId: line.requestId, method: line.method, route: line.route, path: line.path, status: line.status },
    { level: 'info', requestId: id, method: 'GET', route: '/healthz', path: '/healthz', status: 200 },
  );
});

test('a request without an X-Request-Id is logged under the id it was given', async ({ service }) => {
  const answer = await request(service.url, 'GET', '/readyz');
  const id = answer.headers.get('x-request-id')!;
  assert.match(id, /^[0-9a-f-]{36}$/);
  assert.is(theLine(service, id).route, '/readyz');
});

test('the route is the pattern: no id in it, one for a whole tRPC batch, "unmatched" when no route did', async ({ service, account }) => {
  const sessionId = randomUUID();
  const revoke = traced('revoke');
  assert.is((await send(service, 'DELETE', `${AUTH}/sessions/${sessionId}`, revoke, { headers: bearer(account.token) })).status, 404);
  assert.equal(pick(theLine(service, revoke), 'route', 'path', 'status'), { route: '/api/v1/auth/sessions/:id', path: `${AUTH}/sessions/${sessionId}`, status: 404 });

  const batch = traced('batch');
  assert.is((await send(service, 'GET', `/trpc/auth.me,auth.me?batch=1&input=${encodeURIComponent('{}')}`, batch, { headers: bearer(account.apiKey) })).status, 200);
  assert.equal(pick(theLine(service, batch), 'route', 'status'), { route: '/trpc/:path', status: 200 });

  const nowhere = traced('nowhere');
  assert.is((await send(service, 'GET', `/nowhere/${sessionId}`, nowhere)).status, 404);
  assert.equal(pick(theLine(service, nowhere), 'route', 'status'), { route: 'unmatched', status: 404 });
  const wrongMethod = traced('wrong-method');
  assert.is((await send(service, 'PUT', '/healthz', wrongMethod)).status, 405);
  assert.equal(pick(theLine(service, wrongMethod), 'route', 'method', 'status'), { route: 'unmatched', method: 'PUT', status: 405 });
});

test('accountId on calls a procedure authenticated, over REST and tRPC; absent on anonymous ones', async ({ service, account }) => {
  const accountId = account.user.id;
  const byKey = traced('me-key');
  assert.is((await send(service, 'GET', `${AUTH}/me`, byKey, { headers: bearer(account.apiKey) })).status, 200);
  assert.is(theLine(service, byKey).accountId, accountId);
  const byCookie = traced('me-cookie');
  assert.is((await send(service, 'GET', `${AUTH}/me`, byCookie, { headers: { cookie: `svc_token=${account.token}` } })).status, 200);
  assert.is(theLine(service, byCookie).accountId, accountId);
  const overTrpc = traced('trpc-me');
  assert.is((await send(service, 'GET', '/trpc/auth.me', overTrpc, { headers: bearer(account.token) })).status, 200);
  assert.equal(pick(theLine(service, overTrpc), 'route', 'accountId'), { route: '/trpc/:path', accountId });

  const anonymous = traced('anonymous');
  await send(service, 'GET', '/api/v1/openapi.json', anonymous);
  assert.not.ok('accountId' in theLine(service, anonymous));
  const refused = traced('refused');
  assert.is((await send(service, 'GET', `${AUTH}/me`, refused, { headers: bearer('not-a-credential') })).status, 401);
  assert.equal(pick(theLine(service, refused), 'status', 'accountId'), { status: 401, accountId: undefined });
  const loggingIn = traced('login');
  assert.is((await send(service, 'POST', `${AUTH}/login`, loggingIn, { json: { email: account.email, password: account.password } })).status, 200);
  assert.not.ok('accountId' in theLine(service, loggingIn), 'login is a public procedure: it authenticates no caller');
});

test('no query string, token, password or API key anywhere in the log', async ({ service, account, secrets }) => {
  const from = service.logs.lines.length;
  const second = await login(service, account.email, account.password);
  secrets.add(second.body.token);
  await me(service, bearer(account.apiKey));
  await me(service, bearer(second.body.token));
  const queried = traced('query');
  await send(service, 'GET', '/verify-email?token=secret-in-the-query', queried);
  await send(service, 'GET', `${AUTH}/me?token=secret-in-the-query&api_key=${account.apiKey}`, traced('me-query'), { headers: bearer(account.apiKey) });
  await send(service, 'GET', `/trpc/auth.me?input=${encodeURIComponent('{"token":"secret-in-the-query"}')}`, traced('trpc-query'));
  assert.equal(pick(theLine(service, queried), 'route', 'path'), { route: '/verify-email', path: '/verify-email' });
  secrets.add('secret-in-the-query');

  const text = service.logs.text();
  for (const secret of secrets) assert.not.ok(text.includes(secret), `the log contains ${secret.slice(0, 12)}…`);
  const lines = service.logs.lines.slice(from).map((line) => JSON.parse(line) as Line).filter((line) => line.msg === 'request');
  assert.ok(lines.length >= 6, `${lines.length} request lines`);
  for (const line of lines) assert.not.ok(String(line.path).includes('?') || String(line.route).includes('?'), `${line.path}`);
});

test('a 5xx is logged at error, with the same fields', async ({ service }) => {
  const broken = await registerAndVerify(service, 'access.broken@example.com');
  // A sealed API key that no longer opens: the service cannot answer this login.
  await service.deps.db.query("UPDATE accounts SET api_key_sealed = 'v1.garbage' WHERE id = $1", [broken.user.id]);
  const id = traced('broken');
  assert.is((await send(service, 'POST', `${AUTH}/login`, id, { json: { email: broken.email, password: broken.password } })).status, 500);
  assert.equal(pick(theLine(service, id), 'level', 'route', 'status'), { level: 'error', route: '/api/v1/auth/login', status: 500 });
});

test('ACCESS_LOG=off: no request lines, but a 5xx is still logged at error', async () => {
  const quiet = await startTestApp({ LOG_LEVEL: 'info', ACCESS_LOG: 'off' });
  try {
    await request(quiet.url, 'GET', '/healthz');
    await request(quiet.url, 'GET', '/nowhere');
    await request(quiet.url, 'POST', `${AUTH}/login`, { json: { email: 'nobody@example.com', password: 'whatever1' } });
    assert.equal(quiet.logs.lines.map((line) => JSON.parse(line) as Line).filter((line) => line.msg === 'request'), []);

    // /readyz answers 503 while a migration is missing.
    const [row] = await quiet.deps.db.query<{ name: string; applied_at: Date }>('SELECT * FROM schema_migrations ORDER BY name LIMIT 1');
    await quiet.deps.db.query('DELETE FROM schema_migrations WHERE name = $1', [row.name]);
    const id = traced('not-ready');
    try {
      assert.is((await send(quiet, 'GET', '/readyz', id)).status, 503);
    } finally {
      await quiet.deps.db.query('INSERT INTO schema_migrations (name, applied_at) VALUES ($1, $2)', [row.name, row.applied_at]);
    }
    assert.equal(pick(theLine(quiet, id), 'level', 'route', 'status'), { level: 'error', route: '/readyz', status: 503 });
  } finally {
    await quiet.close();
  }
});

function pick(line: Line, ...keys: string[]): Line {
  return Object.fromEntries(keys.map((key) => [key, line[key]]));
}

test.run();
