import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, assertError, bearer, issuePaths, login, registerAndVerify, type Account } from './helpers/auth.ts';
import { checkedForFaults } from './helpers/faults.ts';
import { request, startTestApp, testFetch, type HttpResult, type TestService } from './helpers/service.ts';

type Context = { service: TestService; account: Account; long: Account };
// Every test is checked for faults in the log: never a 5xx, never an error logged.
const test = checkedForFaults(suite<Context>('REST gateway: garbage of every class on every route gets the contract error, never a 5xx'));

const LONG_PASSWORD = `${'Lp0-'.repeat(31)}tail`;

test.before(async (context) => {
  context.service = await startTestApp();
  context.account = await registerAndVerify(context.service, 'sturdy@example.com');
  context.long = await registerAndVerify(context.service, 'long.password@example.com', { password: LONG_PASSWORD });
});
test.after(async ({ service }) => {
  await service?.close();
});

const POST_ROUTES = [
  'register',
  'verify-email',
  'resend-verification',
  'login',
  'logout',
  'password/forgot',
  'password/reset',
  'password/change',
  'api-key/rotate',
  'sessions/revoke-all',
  'email/change',
  'email/confirm',
  'account/delete',
];

function send(context: Context, method: string, path: string, options: Parameters<typeof request>[3] = {}): Promise<HttpResult> {
  return request(context.service.url, method, path, options);
}

/** A body sent with `Transfer-Encoding: chunked`, so the size is only known while reading. */
async function sendChunked(context: Context, path: string, body: string): Promise<HttpResult> {
  const chunks = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let offset = 0; offset < body.length; offset += 1024) controller.enqueue(Buffer.from(body.slice(offset, offset + 1024)));
      controller.close();
    },
  });
  const answer = await testFetch(new URL(path, context.service.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    body: chunks,
    duplex: 'half',
  } as RequestInit);
  const text = await answer.text();
  return { status: answer.status, headers: answer.headers, body: text ? JSON.parse(text) : undefined, text };
}

test('a body that is not application/json: 415 on every POST route', async (context) => {
  const types = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonp', 'application/json; charset=latin1'];
  for (const route of POST_ROUTES) {
    for (const type of types) assertError(await send(context, 'POST', `${AUTH}/${route}`, { body: '{}', headers: { 'content-type': type } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    assertError(await send(context, 'POST', `${AUTH}/${route}`, { body: '{}' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  }
});

test('application/json with a UTF-8 charset, in any case, is accepted', async (context) => {
  const body = JSON.stringify({ email: context.account.email, password: context.account.password });
  for (const type of ['application/json; charset=utf-8', 'Application/JSON; Charset="UTF-8"', 'application/json;charset=utf8']) {
    const result = await send(context, 'POST', `${AUTH}/login`, { body, headers: { 'content-type': type } });
    assert.is(result.status, 200, `${type}: ${result.text}`);
  }
});

test('bodies over 16 KiB: 413 on every POST route, with Content-Length or chunked; 16 KiB exactly is read', async (context) => {
  // Padded with JSON whitespace: a field the route does not know would be refused on its own.
  const padded = (bytes: number) => {
    const base = JSON.stringify({ email: context.account.email, password: context.account.password });
    return `${base.slice(0, -1)}${' '.repeat(bytes - base.length)}}`;
  };
  assert.is(Buffer.byteLength(padded(16384)), 16384);
  assert.is((await send(context, 'POST', `${AUTH}/login`, { body: padded(16384), headers: { 'content-type': 'application/json' } })).status, 200);
  assert.is((await sendChunked(context, `${AUTH}/login`, padded(16384))).status, 200);
  for (const route of POST_ROUTES) {
    assertError(await send(context, 'POST', `${AUTH}/${route}`, { body: padded(16385), headers: { 'content-type': 'application/json' } }), 413, 'PAYLOAD_TOO_LARGE');
    assertError(await sendChunked(context, `${AUTH}/${route}`, padded(16385)), 413, 'PAYLOAD_TOO_LARGE');
    assertError(await sendChunked(context, `${AUTH}/${route}`, padded(1_000_000)), 413, 'PAYLOAD_TOO_LARGE');
  }
});

test('malformed JSON: 400 INVALID_JSON on every POST route', async (context) => {
  for (const route of POST_ROUTES) {
    for (const body of ['{', '{"email":', "{'email':'a@b.co'}", '{"a":1,}', 'undefined', 'NaN', '\u0000']) {
      assertError(await send(context, 'POST', `${AUTH}/${route}`, { body, headers: { 'content-type': 'application/json' } }), 400, 'INVALID_JSON');
    }
  }
});

test('JSON that is not an object (array, number, null, string, boolean): 400 VALIDATION_FAILED', async (context) => {
  for (const route of POST_ROUTES) {
    for (const json of [[], [{ email: 'a@b.co' }], 42, null, 'text', true]) {
      const refused = await send(context, 'POST', `${AUTH}/${route}`, { json });
      assertError(refused, 400, 'VALIDATION_FAILED');
      // Like any VALIDATION_FAILED, it names what is wrong: the body as a whole.
      assert.equal(refused.body.issues, [{ path: '(body)', message: 'must be a JSON object' }]);
    }
  }
});

test('missing fields and wrong types: 400 VALIDATION_FAILED naming each field', async (context) => {
  // Signed in where the route needs it: the fields are checked after the credentials.
  const signedIn = ['password/change', 'api-key/rotate', 'sessions/revoke-all', 'email/change', 'account/delete'];
  const cases: Array<[string, unknown, string[]]> = [
    ['register', {}, ['email', 'name', 'password']],
    ['register', { email: ['a@b.co'], password: { value: 'x' }, name: 7, company: 5 }, ['company', 'email', 'name', 'password']],
    ['verify-email', {}, ['token']],
    ['verify-email', { token: ['abc'] }, ['token']],
    ['resend-verification', {}, ['email']],
    ['resend-verification', { email: true }, ['email']],
    ['login', {}, ['email', 'password']],
    ['login', { email: null, password: 12345678 }, ['email', 'password']],
    ['password/forgot', {}, ['email']],
    ['password/forgot', { email: 'Someone <a@b.example>' }, ['email']],
    ['password/reset', {}, ['password', 'token']],
    ['password/reset', { token: 7, password: 12345678 }, ['password', 'token']],
    ['password/change', {}, ['current_password', 'new_password']],
    ['password/change', { current_password: 'x', new_password: 'short' }, ['new_password']],
    ['api-key/rotate', { grace_seconds: 'soon' }, ['grace_seconds']],
    ['sessions/revoke-all', { keep_current: 'no' }, ['keep_current']],
    ['email/change', {}, ['new_email', 'password']],
    ['email/change', { new_email: 'not an address', password: 5 }, ['new_email', 'password']],
    ['email/confirm', {}, ['token']],
    ['account/delete', {}, ['password']],
    ['account/delete', { password: null }, ['password']],
  ];
  for (const [route, json, paths] of cases) {
    const headers = signedIn.includes(route) ? bearer(context.account.token) : {};
    const result = await send(context, 'POST', `${AUTH}/${route}`, { json, headers });
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(result).sort(), paths, `${route} ${JSON.stringify(json)}`);
  }
});

test('oversize and empty fields: 400 VALIDATION_FAILED', async (context) => {
  const long = `${'a'.repeat(245)}@example.com`;
  assert.is(long.length, 257);
  const email255 = `${'a'.repeat(243)}@example.com`;
  assert.is(email255.length, 255);
  const cases: Array<[string, unknown, string]> = [
    ['register', { email: email255, password: 'long enough', name: 'N' }, 'email'],
    ['register', { email: 'ok@example.com', password: '1234567', name: 'N' }, 'password'],
    ['register', { email: 'ok@example.com', password: 'p'.repeat(129), name: 'N' }, 'password'],
    ['register', { email: 'ok@example.com', password: 'long enough', name: ' \t  ' }, 'name'],
    ['login', { email: long, password: 'long enough' }, 'email'],
    ['login', { email: 'ok@example.com', password: 'p'.repeat(129) }, 'password'],
    ['login', { email: 'ok@example.com', password: '' }, 'password'],
    ['resend-verification', { email: email255 }, 'email'],
    ['verify-email', { token: 't'.repeat(201) }, 'token'],
    ['verify-email', { token: '' }, 'token'],
  ];
  for (const [route, json, path] of cases) {
    const result = await send(context, 'POST', `${AUTH}/${route}`, { json });
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(result), [path], `${route} ${JSON.stringify(json).slice(0, 60)}`);
  }
});

test('a 128-character password logs in exactly as typed, never truncated', async (context) => {
  const { long } = context;
  assert.is(LONG_PASSWORD.length, 128);
  assert.is((await login(context.service, long.email, LONG_PASSWORD)).status, 200);
  for (const variant of [LONG_PASSWORD.slice(0, 127), `${LONG_PASSWORD.slice(0, 127)}X`, LONG_PASSWORD.slice(0, 72), `${LONG_PASSWORD.slice(0, 72)}${'z'.repeat(56)}`]) {
    assertError(await login(context.service, long.email, variant), 401, 'INVALID_CREDENTIALS');
  }
});

test('unknown routes: 404 NOT_FOUND', async (context) => {
  for (const [method, path] of [['GET', '/nope'], ['POST', `${AUTH}/nope`], ['GET', '/api/v1'], ['GET', '/api/v2/auth/me'], ['GET', `${AUTH}/me/more`], ['DELETE', '/nope/']]) {
    assertError(await send(context, method, path), 404, 'NOT_FOUND');
  }
});

test('a known path with the wrong method: 405 with Allow', async (context) => {
  const cases: Array<[string, string, string]> = [
    ['GET', `${AUTH}/login`, 'POST'],
    ['PUT', `${AUTH}/register`, 'POST'],
    ['DELETE', `${AUTH}/logout`, 'POST'],
    ['PATCH', `${AUTH}/verify-email`, 'POST'],
    ['GET', `${AUTH}/resend-verification`, 'POST'],
    ['POST', `${AUTH}/me`, 'GET'],
    ['DELETE', `${AUTH}/me`, 'GET'],
    ['POST', '/healthz', 'GET'],
    // The site's root is a page (a redirect to /account or /login).
    ['DELETE', '/', 'GET'],
    ['GET', `${AUTH}/password/forgot`, 'POST'],
    ['PUT', `${AUTH}/account/delete`, 'POST'],
    ['POST', `${AUTH}/sessions`, 'GET'],
    ['PUT', `${AUTH}/sessions/abc`, 'DELETE'],
    ['DELETE', `${AUTH}/activity`, 'GET'],
  ];
  for (const [method, path, allow] of cases) {
    const result = await send(context, method, path, method === 'GET' || method === 'DELETE' ? {} : { json: {} });
    assertError(result, 405, 'METHOD_NOT_ALLOWED');
    assert.is(result.headers.get('allow'), allow, `${method} ${path}`);
  }
});

test('HEAD on a GET route answers like the GET, without a body', async (context) => {
  const anonymous = await send(context, 'HEAD', `${AUTH}/me`);
  assert.is(anonymous.status, 401);
  assert.is(anonymous.headers.get('www-authenticate'), 'Bearer');
  assert.is(anonymous.text, '');
  assert.is((await send(context, 'HEAD', `${AUTH}/me`, { headers: bearer(context.account.apiKey) })).status, 200);
});

test('the tRPC endpoint answers garbage with 4xx too', async (context) => {
  const body = { body: '{"email":', headers: { 'content-type': 'application/json' } };
  assert.is((await send(context, 'POST', '/trpc/auth.login', body)).status, 400);
  assert.is((await send(context, 'POST', '/trpc/auth.login', { body: 'x'.repeat(20_000), headers: { 'content-type': 'application/json' } })).status, 413);
  assert.is((await sendChunked(context, '/trpc/auth.login', 'x'.repeat(100_000))).status, 413);
  assert.is((await send(context, 'GET', '/trpc/auth.login')).status, 405);
  assert.is((await send(context, 'GET', '/trpc/auth.nothing')).status, 404);
});

test('garbage of every class, signed in or not, leaves the stored accounts untouched; both still sign in', async (context) => {
  const accounts = () => context.service.deps.db.query('SELECT * FROM accounts ORDER BY id');
  const snapshot = await accounts();
  const wrongTypes = JSON.stringify({ email: 5, password: 5, current_password: 5, new_password: 5, new_email: 5, token: 5 });
  const garbage: Array<[string, string]> = [['{"email":', 'application/json'], ['[]', 'application/json'], ['{}', 'text/plain'], [wrongTypes, 'application/json']];
  for (const route of POST_ROUTES) {
    for (const [body, type] of garbage) {
      for (const headers of [{}, bearer(context.account.token)]) {
        const result = await send(context, 'POST', `${AUTH}/${route}`, { body, headers: { ...headers, 'content-type': type } });
        assert.ok(result.status >= 400 && result.status < 500, `${route} ${body}: ${result.status}`);
      }
    }
  }
  assert.equal(await accounts(), snapshot);
  assert.is((await login(context.service, context.account.email, context.account.password)).status, 200);
  assert.is((await login(context.service, context.long.email, LONG_PASSWORD)).status, 200);
});

test.run();
