import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, assertError, bearer, login, me, nextMail, registerAndVerify } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';

type Context = { service: TestService };
const test = suite<Context>('REST operations: health, readiness, OpenAPI, docs, request ids and logs');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const AUTH_PATHS: Array<[string, string]> = [
  ['/auth/register', 'post'],
  ['/auth/verify-email', 'post'],
  ['/auth/resend-verification', 'post'],
  ['/auth/login', 'post'],
  ['/auth/me', 'get'],
  ['/auth/logout', 'post'],
];

test('GET /healthz and /readyz: 200', async ({ service }) => {
  const health = await request(service.url, 'GET', '/healthz');
  assert.is(health.status, 200);
  const ready = await request(service.url, 'GET', '/readyz');
  assert.is(ready.status, 200);
});

test('GET /readyz: 503 while a migration is missing, 200 again once it is back', async ({ service }) => {
  const [row] = await service.deps.db.query<{ name: string; applied_at: Date }>('SELECT * FROM schema_migrations ORDER BY name LIMIT 1');
  await service.deps.db.query('DELETE FROM schema_migrations WHERE name = $1', [row.name]);
  try {
    const notReady = await request(service.url, 'GET', '/readyz');
    assertError(notReady, 503, 'SERVICE_UNAVAILABLE');
    assert.is((await request(service.url, 'GET', '/healthz')).status, 200);
  } finally {
    await service.deps.db.query('INSERT INTO schema_migrations (name, applied_at) VALUES ($1, $2)', [row.name, row.applied_at]);
  }
  assert.is((await request(service.url, 'GET', '/readyz')).status, 200);
});

test('GET /api/v1/openapi.json: an OpenAPI 3 document with the six auth routes', async ({ service }) => {
  const result = await request(service.url, 'GET', '/api/v1/openapi.json');
  assert.is(result.status, 200);
  assert.match(result.headers.get('content-type') ?? '', 'application/json');
  const document = result.body;
  assert.match(document.openapi, /^3\.\d+\.\d+$/);
  assert.type(document.info.title, 'string');
  assert.is(document.servers[0].url, `${service.env.PUBLIC_URL}/api/v1`);
  for (const [path, method] of AUTH_PATHS) {
    assert.ok(document.paths[path]?.[method], `${method.toUpperCase()} ${path} is documented`);
  }
  const register = document.paths['/auth/register'].post;
  assert.ok(register.requestBody, 'register documents its body');
  const schema = JSON.stringify(register.requestBody);
  for (const field of ['email', 'password', 'name', 'company']) assert.match(schema, `"${field}"`);
  assert.equal(document.paths['/auth/me'].get.security, [{ bearer: [] }, { cookie: [] }], '/me takes a Bearer token or the cookie');
});

test('the OpenAPI document describes the answers the gateway really gives', async ({ service }) => {
  const document = (await request(service.url, 'GET', '/api/v1/openapi.json')).body;
  const statuses = (path: string, method: string) => Object.keys(document.paths[path][method].responses).sort();
  // 408 and 431 on every route: Node answers them before any route is found (gateway/src/server.ts).
  assert.equal(statuses('/auth/register', 'post'), ['201', '400', '408', '413', '415', '429', '431', '500', '503']);
  assert.equal(statuses('/auth/login', 'post'), ['200', '400', '401', '403', '408', '413', '415', '429', '431', '500', '503']);
  assert.equal(statuses('/auth/me', 'get'), ['200', '400', '401', '408', '431', '500', '503']);

  // One error schema, the gateway's, and no trace of trpc-to-openapi's own error body.
  const error = document.components.schemas.Error;
  assert.equal(error.required, ['success', 'code', 'message']);
  assert.equal(error.properties.success.enum, [false]);
  assert.ok(error.properties.code.enum.includes('RATE_LIMITED'));
  assert.equal(error.properties.issues.items.required, ['path', 'message']);
  assert.not.match(JSON.stringify(document), /"#\/components\/schemas\/error\./);

  const limited = document.paths['/auth/login'].post.responses['429'];
  assert.ok(limited.headers['Retry-After'], '429 documents Retry-After');
  assert.equal(limited.content['application/json'].schema.allOf[1].properties.code.enum, ['RATE_LIMITED']);
  const unauthorized = document.paths['/auth/me'].get.responses['401'];
  assert.ok(unauthorized.headers['WWW-Authenticate'], '401 on /me documents WWW-Authenticate');
  assert.match(unauthorized.description, /JWT, API key or cookie/);
  assert.ok(document.paths['/auth/login'].post.responses['200'].headers['Set-Cookie'], 'login documents its cookie');

  // What the document promises is what the gateway answers with.
  const refused = await request(service.url, 'POST', `${AUTH}/register`, { json: { email: 'not an address' } });
  assertError(refused, 400, 'VALIDATION_FAILED');
  assert.ok(error.properties.code.enum.includes(refused.body.code));
  const created = await request(service.url, 'POST', `${AUTH}/register`, { json: { email: 'documented@example.com', password: 'long enough password', name: 'Doc' } });
  assert.is(created.status, 201);
});

test('GET /api/v1/docs: an HTML page of the same routes', async ({ service }) => {
  const result = await request(service.url, 'GET', '/api/v1/docs');
  assert.is(result.status, 200);
  assert.match(result.headers.get('content-type') ?? '', 'text/html');
  assert.match(result.text, /^<!doctype html>/i);
  for (const [path, method] of AUTH_PATHS) assert.match(result.text, new RegExp(`${method.toUpperCase()}</span> <code>${path}</code>`));
  assert.match(result.text, 'openapi.json');
});

test('X-Request-Id: a sane one is echoed, anything else replaced by a fresh id', async ({ service }) => {
  const echoed = await request(service.url, 'GET', '/healthz', { headers: { 'x-request-id': 'trace-abc.123_XYZ' } });
  assert.is(echoed.headers.get('x-request-id'), 'trace-abc.123_XYZ');
  for (const offered of ['has spaces in it', 'x'.repeat(65), '<script>']) {
    const replaced = await request(service.url, 'GET', '/healthz', { headers: { 'x-request-id': offered } });
    assert.match(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  }
  const first = (await request(service.url, 'GET', '/healthz')).headers.get('x-request-id');
  const second = (await request(service.url, 'GET', '/healthz')).headers.get('x-request-id');
  assert.is.not(first, second);
  const onError = await request(service.url, 'GET', `${AUTH}/me`, { headers: { 'x-request-id': 'trace-on-error' } });
  assert.is(onError.headers.get('x-request-id'), 'trace-on-error');
});

test('logs are JSON lines; each request line carries its request id and the full path', async ({ service }) => {
  await request(service.url, 'POST', `${AUTH}/login`, { json: { email: 'log@example.com', password: 'whatever1' }, headers: { 'x-request-id': 'trace-login-1' } });
  await request(service.url, 'GET', '/verify-email?token=in-the-query', { headers: { 'x-request-id': 'trace-page-1' } });
  const lines = service.logs.lines.map((line) => JSON.parse(line));
  for (const line of lines) assert.type(line.msg, 'string');
  const loginLine = lines.find((line) => line.requestId === 'trace-login-1');
  assert.ok(loginLine, 'a line for the login request');
  assert.is(loginLine.method, 'POST');
  assert.is(loginLine.path, `${AUTH}/login`);
  assert.is(loginLine.status, 401);
  const pageLine = lines.find((line) => line.requestId === 'trace-page-1');
  assert.is(pageLine.path, '/verify-email');
});

test('a 5xx carries no internal detail; the detail goes to the log with the request id', async ({ service }) => {
  const account = await registerAndVerify(service, 'broken@example.com');
  // A sealed API key that no longer opens: the service cannot answer this login.
  await service.deps.db.query("UPDATE accounts SET api_key_sealed = 'v1.garbage' WHERE id = $1", [account.user.id]);
  const json = { email: account.email, password: account.password };
  const rest = await request(service.url, 'POST', `${AUTH}/login`, { json, headers: { 'x-request-id': 'trace-broken-1' } });
  assert.is(rest.status, 500);
  assert.equal(rest.body, { success: false, code: 'INTERNAL_ERROR', message: 'Something went wrong on our side.' });
  const trpc = await request(service.url, 'POST', '/trpc/auth.login', { json });
  assert.is(trpc.status, 500);
  assert.is(trpc.body.error.message, 'Something went wrong on our side.');
  assert.is(trpc.body.error.data.appCode, 'INTERNAL_ERROR');
  assert.not.match(trpc.text, /stack|sealed|\.ts:\d+/);
  const logged = service.logs.lines.map((line) => JSON.parse(line)).filter((line) => line.requestId === 'trace-broken-1' && line.level === 'error');
  assert.ok(logged.some((line) => line.err?.message), 'the cause is logged with the request id');
});

/** An account's flows (register, verify, log in and out, a wrong password, a second registration); the secrets they used. */
async function accountFlows(service: TestService): Promise<Set<string>> {
  const secrets = new Set<string>();
  const account = await registerAndVerify(service, 'secretive@example.com', { password: 'Pa55word-for-the-log-check' });
  secrets.add(account.password).add(account.token).add(account.apiKey);
  const verifyToken = linkToken(service.smtp.mailsTo(account.email)[0]);
  secrets.add(verifyToken);
  await request(service.url, 'GET', `/verify-email?token=${verifyToken}`);
  await me(service, bearer(account.apiKey));
  await me(service, { cookie: `svc_token=${account.token}` });
  const second = await login(service, account.email, account.password);
  secrets.add(second.body.token);
  await request(service.url, 'POST', `${AUTH}/logout`, { headers: bearer(second.body.token) });
  await me(service, bearer(second.body.token));
  await login(service, account.email, 'wrong-Pa55word-for-the-log');
  secrets.add('wrong-Pa55word-for-the-log');
  await request(service.url, 'POST', `${AUTH}/register`, { json: { email: account.email, password: 'another-Pa55word-here', name: 'X' } });
  secrets.add('another-Pa55word-here');
  const seen = service.smtp.mailsTo(account.email).length;
  await nextMail(service, account.email, seen);
  return secrets;
}

test('no password, JWT, API key or verification token ever appears in the logs', async ({ service }) => {
  const from = service.logs.lines.length;
  const secrets = await accountFlows(service);
  assert.is(secrets.size, 7);
  const text = service.logs.text();
  assert.ok(service.logs.lines.length - from >= 10, `the flows were logged: ${service.logs.lines.length - from} lines`);
  for (const secret of secrets) assert.not.ok(text.includes(secret), `the logs contain ${secret.slice(0, 12)}…`);
});

test.run();
