import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appRouter } from '../server/src/router.ts';
import { AUTH, PASSWORD, assertError, bearer, login, me, register, registerAndVerify, type Account } from './helpers/auth.ts';
import { request, startTestApp, type HttpResult, type TestService } from './helpers/service.ts';
import { checkedForFaults } from './helpers/faults.ts';
import { trpcOver } from './helpers/trpc-http.ts';

// Every input is a strict object: a field a route does not know is a 400 naming it, on
// every REST route and every tRPC procedure, and nothing happens. Validation speaks to a
// person: "password is required", never the schema library's "expected string".

type Context = { service: TestService; user: Account; admin: Account };
const test = checkedForFaults(suite<Context>('strict input: unknown fields are refused by name, on every route, in words a person reads'));

test.before(async (context) => {
  context.service = await startTestApp();
  context.user = await registerAndVerify(context.service, 'strict.user@example.com');
  context.admin = await registerAndVerify(context.service, 'strict.admin@example.com');
  await context.service.deps.db.query(`UPDATE accounts SET role = 'admin' WHERE id = $1`, [context.admin.user.id]);
});
test.after(async ({ service }) => {
  await service?.close();
});

const STRAY = 'zz_not_a_field';
const UNKNOWN = { path: STRAY, message: 'is not a field of this request' };
// What zod says of itself; none of it may reach a caller.
const LIBRARY_WORDS = /Invalid input|expected (string|number|object|boolean|void)|received (undefined|null|string|number)|Unrecognized key|Too (small|big):/;

/** The state the refused calls must leave alone: who can sign in, with which key, how many sessions. */
async function snapshot(service: TestService, account: Account) {
  const [row] = await service.deps.db.query<{ email: string; password_hash: string; api_key_hash: Buffer; sessions: number }>(
    `SELECT email, password_hash, api_key_hash, (SELECT count(*)::int FROM sessions WHERE account_id = a.id AND revoked_at IS NULL) AS sessions
     FROM accounts a WHERE id = $1`,
    [account.user.id],
  );
  return { ...row, api_key_hash: row.api_key_hash.toString('hex') };
}

function assertNamesStray(result: HttpResult, label: string) {
  assert.is(result.status, 400, `${label}: ${result.text}`);
  const body = result.body.error ? { code: result.body.error.data.appCode, issues: result.body.error.data.issues, message: result.body.error.message } : result.body;
  assert.is(body.code, 'VALIDATION_FAILED', label);
  assert.ok(body.issues.some((issue: { path: string; message: string }) => issue.path === UNKNOWN.path && issue.message === UNKNOWN.message), `${label}: ${JSON.stringify(body.issues)}`);
  assert.match(body.message, `${STRAY} is not a field of this request`, label);
  assert.not.match(body.message, LIBRARY_WORDS, label);
}

/** The REST routes under /auth and /admin with one of `methods`, from the OpenAPI document, each id in their path filled in. */
async function accountRoutes(service: TestService, methods: string[]): Promise<Array<{ method: string; path: string; url: string }>> {
  const document = (await request(service.url, 'GET', '/api/v1/openapi.json')).body;
  return Object.entries<Record<string, unknown>>(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations)
      .filter((method) => methods.includes(method) && /^\/(auth|admin)\//.test(path))
      .map((method) => ({ method, path, url: `/api/v1${path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000')}` })),
  );
}

test('every REST route with a body refuses a field it does not know, naming it, and changes nothing', async ({ service, user, admin }) => {
  const before = await snapshot(service, user);
  const routes = await accountRoutes(service, ['post']);
  for (const { path, url } of routes) {
    const caller = path.startsWith('/admin') ? admin : user;
    assertNamesStray(await request(service.url, 'POST', url, { json: { [STRAY]: 1 }, headers: bearer(caller.token) }), `POST ${url}`);
  }
  assert.ok(routes.length >= 16, `${routes.length} POST routes tried`);
  assert.equal(await snapshot(service, user), before);
});

test('a misspelt grace_seconds never rotates the key: 400 naming it, and the key is the same', async ({ service, user }) => {
  const refused = await request(service.url, 'POST', `${AUTH}/api-key/rotate`, { json: { grace_second: 3600 }, headers: bearer(user.token) });
  assertError(refused, 400, 'VALIDATION_FAILED');
  assert.equal(refused.body.issues, [{ path: 'grace_second', message: 'is not a field of this request' }]);
  const still = await me(service, bearer(user.apiKey));
  assert.is(still.status, 200, 'the old key still works');
  assert.is(still.body.user.api_key, user.apiKey, 'no new key was made');
});

test('register, resend-verification, password/forgot and sessions/revoke-all refuse extra fields too', async ({ service, user }) => {
  const cases: Array<[string, Record<string, unknown>, Record<string, string>]> = [
    ['register', { email: 'stray.register@example.com', password: PASSWORD, name: 'Stray', role: 'admin' }, {}],
    ['resend-verification', { email: user.email, redirect: 'https://evil.example' }, {}],
    ['password/forgot', { email: user.email, to: 'evil@example.net' }, {}],
    ['sessions/revoke-all', { keep_current: true, everyone: true }, bearer(user.token)],
    ['login', { email: user.email, password: PASSWORD, remember: true }, {}],
  ];
  for (const [route, body, headers] of cases) {
    const result = await request(service.url, 'POST', `${AUTH}/${route}`, { json: body, headers });
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.is(result.body.issues.length, 1, `${route}: only the stray field is wrong: ${result.text}`);
  }
  assert.is((await login(service, 'stray.register@example.com')).status, 401, 'the registration with role: admin did not happen');
  assert.is(service.smtp.mailsTo('stray.register@example.com').length, 0);
  assert.is((await me(service, bearer(user.token))).status, 200, 'revoke-all with a stray field signed nobody out');
});

test('GET routes that take a query refuse an unknown parameter; routes without input ignore the query string', async ({ service, admin, user }) => {
  assertNamesStray(await request(service.url, 'GET', `/api/v1/admin/inbox?stat=dead&${STRAY}=1`, { headers: bearer(admin.token) }), 'GET /admin/inbox');
  const refused = await request(service.url, 'GET', '/api/v1/admin/inbox?stat=dead', { headers: bearer(admin.token) });
  assert.equal(refused.body.issues, [{ path: 'stat', message: 'is not a field of this request' }], 'a misspelt filter is not "no filter"');
  assertNamesStray(await request(service.url, 'DELETE', `${AUTH}/sessions/00000000-0000-4000-8000-000000000000?${STRAY}=1`, { headers: bearer(user.token) }), 'DELETE /sessions/{id}');
  assert.is((await request(service.url, 'GET', `${AUTH}/me?_=1700000000`, { headers: bearer(user.token) })).status, 200, 'a cache-buster on /me is harmless');
});

test('a field put where the route does not read it is refused by name, not dropped: a query string on POST and PATCH, a body on DELETE', async ({ service, user, admin }) => {
  const before = await snapshot(service, user);
  const routes = await accountRoutes(service, ['post', 'patch', 'delete']);
  for (const { method, path, url } of routes) {
    const caller = path.startsWith('/admin') ? admin : user;
    const misplaced = method === 'delete' ? { json: { [STRAY]: 1 } } : { url: `${url}?${STRAY}=1`, json: {} };
    const result = await request(service.url, method.toUpperCase(), misplaced.url ?? url, { json: misplaced.json, headers: bearer(caller.token) });
    assertNamesStray(result, `${method.toUpperCase()} ${misplaced.url ?? url}`);
  }
  assert.ok(routes.length >= 20, `${routes.length} routes tried`);

  const rotate = await request(service.url, 'POST', `${AUTH}/api-key/rotate?grace_seconds=600`, { headers: bearer(user.token) });
  assertError(rotate, 400, 'VALIDATION_FAILED');
  assert.equal(rotate.body.issues, [{ path: 'grace_seconds', message: 'is not a field of this request' }]);
  assert.is((await me(service, bearer(user.apiKey))).status, 200, 'the key was not rotated');

  const session = await login(service, user.email);
  const listed = await request(service.url, 'GET', `${AUTH}/sessions`, { headers: bearer(session.body.token) });
  const { id } = listed.body.sessions.find((one: { current: boolean }) => one.current);
  const ended = await request(service.url, 'DELETE', `${AUTH}/sessions/${id}`, { json: { everyone: true }, headers: bearer(user.token) });
  assertError(ended, 400, 'VALIDATION_FAILED');
  assert.equal(ended.body.issues, [{ path: 'everyone', message: 'is not a field of this request' }]);
  assert.is((await me(service, bearer(session.body.token))).status, 200, 'the session was not ended');
  assert.is((await request(service.url, 'DELETE', `${AUTH}/sessions/${id}`, { headers: bearer(user.token) })).status, 200, 'without the body it is');
  assert.is((await me(service, bearer(session.body.token))).status, 401);
  const after = await snapshot(service, user);
  assert.equal({ ...after, sessions: before.sessions }, before, 'nothing else changed');
});

test('every tRPC procedure refuses a field it does not know, naming it (queries and mutations)', async ({ service, user, admin }) => {
  const before = await snapshot(service, user);
  const trpc = trpcOver(service);
  const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { type: string } }>);
  for (const [path, procedure] of procedures) {
    const caller = path.startsWith('admin.') ? admin : user;
    const input = { [STRAY]: 1 };
    const result = procedure._def.type === 'query' ? await trpc.query(caller, path, input) : await trpc.mutation(caller, path, input);
    assert.is(result.status, 400, `${path}: ${result.text}`);
    assert.is(result.body.error.data.appCode, 'VALIDATION_FAILED', path);
    const issues = result.body.error.data.issues as Array<{ path: string; message: string }>;
    // A procedure that takes no input at all says so of the whole input; the others name the field.
    const named = issues.some((issue) => issue.path === STRAY) || issues.some((issue) => issue.path === '(body)' && issue.message === 'takes no input');
    assert.ok(named, `${path}: ${JSON.stringify(issues)}`);
    assert.not.match(result.body.error.message, LIBRARY_WORDS, path);
  }
  assert.ok(procedures.length >= 30, `${procedures.length} procedures tried`);
  assert.equal(await snapshot(service, user), before);
});

test('a tRPC mutation with its input in the URL is refused, not run without it', async ({ service, user }) => {
  const rotated = await request(service.url, 'POST', `/trpc/auth.rotateApiKey?input=${encodeURIComponent(JSON.stringify({ grace_seconds: 600 }))}`, {
    headers: { ...bearer(user.token), 'content-type': 'application/json' },
  });
  assertError(rotated, 400, 'VALIDATION_FAILED');
  assert.equal(rotated.body.issues, [{ path: 'input', message: 'is read from the body of a POST, not from its URL' }]);
  assert.is((await me(service, bearer(user.apiKey))).status, 200, 'the key was not rotated');
  // The batch flag is no input: a batched mutation still runs.
  const batched = await request(service.url, 'POST', '/trpc/auth.forgotPassword?batch=1', { json: { 0: { email: 'nobody.batched@example.com' } } });
  assert.is(batched.status, 200, batched.text);
  assert.is(batched.body[0].result.data.success, true);
});

test('missing fields and wrong types are said in words: "password is required", "name must be text"', async ({ service }) => {
  const missing = await register(service, { email: 'words@example.com', name: 'Words' });
  assertError(missing, 400, 'VALIDATION_FAILED');
  assert.equal(missing.body.issues, [{ path: 'password', message: 'is required' }]);
  assert.is(missing.body.message, 'password is required.');

  const typed = await register(service, { email: 42, password: ['x'], name: null, company: false });
  assertError(typed, 400, 'VALIDATION_FAILED');
  assert.equal(typed.body.issues, [
    { path: 'email', message: 'must be text' },
    { path: 'password', message: 'must be text' },
    { path: 'name', message: 'must not be null' },
    { path: 'company', message: 'must be text' },
  ]);
  assert.is(typed.body.message, 'email must be text; password must be text; name must not be null; company must be text.');

  const ranged = await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token: '' } });
  assert.equal(ranged.body.issues, [{ path: 'token', message: 'must not be empty' }]);
  const outOfRange = await request(service.url, 'POST', '/trpc/auth.rotateApiKey', { json: { grace_seconds: 1.5 }, headers: bearer((await registerAndVerify(service, 'words.key@example.com')).token) });
  assert.equal(outOfRange.body.error.data.issues, [{ path: 'grace_seconds', message: 'must be a whole number' }]);
  const wholeBody = await request(service.url, 'POST', '/trpc/auth.login', { json: 'just text' });
  assert.equal(wholeBody.body.error.data.issues, [{ path: '(body)', message: 'must be a JSON object' }]);
  assert.is(wholeBody.body.error.message, 'The request must be a JSON object.');
  for (const result of [missing, typed, ranged]) assert.not.match(result.text, LIBRARY_WORDS);
});

test('a 413 names the limit: 16 KiB on REST and tRPC, 8 KiB on page forms, 1 MiB on webhooks', async ({ service }) => {
  const json = JSON.stringify({ email: 'a@b.example', password: 'x'.repeat(17 * 1024) });
  for (const path of [`${AUTH}/login`, '/trpc/auth.login']) {
    const result = await request(service.url, 'POST', path, { body: json, headers: { 'content-type': 'application/json' } });
    assertError(result, 413, 'PAYLOAD_TOO_LARGE');
    assert.is(result.body.message, 'The request body is over the limit of 16 KiB.', path);
  }
  const form = await request(service.url, 'POST', '/login', { body: `email=a%40b.example&password=${'x'.repeat(17 * 1024)}`, headers: { 'content-type': 'application/x-www-form-urlencoded', origin: service.url } });
  assert.is(form.status, 413);
  assert.match(form.text, 'The request body is over the limit of 8 KiB.');
  const webhook = await request(service.url, 'POST', '/billingprovider/webhook', { body: Buffer.alloc(1024 * 1024 + 1, 0x20), headers: { 'content-type': 'application/json' } });
  assertError(webhook, 413, 'PAYLOAD_TOO_LARGE');
  assert.is(webhook.body.message, 'The request body is over the limit of 1 MiB.');
});

test.run();
