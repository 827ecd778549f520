import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, assertError, bearer, registerAndVerify, requestFrom, type Account } from './helpers/auth.ts';
import { startTestApp, type HttpResult, type TestService } from './helpers/service.ts';

type Context = { service: TestService; account: Account };
const test = suite<Context>('CORS over HTTP: listed origins on /trpc and /api/v1 only, with credentials, on errors too; nothing elsewhere');

const LISTED = 'https://app.example.com';
const LISTED_DEV = 'http://localhost:5173';
const METRICS_TOKEN = 'metrics-token-for-the-cors-suite';

test.before(async (context) => {
  context.service = await startTestApp({ CORS_ORIGINS: `${LISTED},${LISTED_DEV}/`, METRICS_TOKEN });
  context.account = await registerAndVerify(context.service, 'cors@example.com');
});
test.after(async ({ service }) => {
  await service?.close();
});

const send = (context: Context, method: string, path: string, headers: Record<string, string>, json?: unknown) =>
  requestFrom('127.0.0.1', context.service.url, method, path, { headers, json });

const preflight = (context: Context, path: string, origin: string, method = 'POST', requestHeaders = 'content-type,authorization') =>
  send(context, 'OPTIONS', path, { origin, 'access-control-request-method': method, 'access-control-request-headers': requestHeaders });

const corsHeaders = (result: HttpResult) => [...result.headers.keys()].filter((name) => name.startsWith('access-control-'));
const varies = (result: HttpResult) => (result.headers.get('vary') ?? '').split(',').map((part) => part.trim().toLowerCase());
const list = (value: string | null) => (value ?? '').split(',').map((part) => part.trim().toLowerCase());

/** The answer a listed origin gets: its own origin echoed (never `*`), credentials allowed, Vary: Origin. */
function assertAllowed(result: HttpResult, origin: string, label: string) {
  assert.is(result.headers.get('access-control-allow-origin'), origin, label);
  assert.is(result.headers.get('access-control-allow-credentials'), 'true', label);
  assert.ok(varies(result).includes('origin'), `${label}: Vary ${result.headers.get('vary')}`);
}

function assertNoCors(result: HttpResult, label: string) {
  assert.equal(corsHeaders(result), [], label);
}

const API_PATHS = [`${AUTH}/me`, `${AUTH}/login`, '/api/v1/admin/inbox', '/trpc/auth.me', '/trpc/auth.login', '/trpc/auth.me,auth.me'];

test('a preflight from a listed origin: 204, the origin echoed, methods, headers (tRPC\'s too), credentials and a max age', async (context) => {
  for (const origin of [LISTED, LISTED_DEV]) {
    for (const path of API_PATHS) {
      const answer = await preflight(context, path, origin, 'POST', 'content-type,authorization,x-request-id,trpc-accept');
      const label = `${origin} ${path}`;
      assert.is(answer.status, 204, label);
      assert.is(answer.text, '');
      assertAllowed(answer, origin, label);
      assert.equal(list(answer.headers.get('access-control-allow-methods')), ['get', 'post', 'patch', 'delete'], label);
      assert.equal(list(answer.headers.get('access-control-allow-headers')), ['content-type', 'authorization', 'x-request-id', 'trpc-accept'], label);
      assert.is(answer.headers.get('access-control-max-age'), '600', label);
    }
  }
  const deletion = await preflight(context, `${AUTH}/sessions/${randomUUID()}`, LISTED, 'DELETE', 'authorization');
  assert.is(deletion.status, 204);
  assertAllowed(deletion, LISTED, 'DELETE preflight');
});

test('the actual request from a listed origin: answered as usual, with the CORS headers and the headers a frontend needs exposed', async (context) => {
  const { account } = context;
  const rest = await send(context, 'GET', `${AUTH}/me`, { origin: LISTED, ...bearer(account.apiKey) });
  assert.is(rest.status, 200);
  assert.is(rest.body.user.email, account.email);
  assertAllowed(rest, LISTED, 'REST /me');
  assert.equal(list(rest.headers.get('access-control-expose-headers')), ['retry-after', 'www-authenticate', 'x-request-id']);

  const trpc = await send(context, 'GET', '/trpc/auth.me', { origin: LISTED_DEV, ...bearer(account.token) });
  assert.is(trpc.status, 200);
  assert.is(trpc.body.result.data.user.email, account.email);
  assertAllowed(trpc, LISTED_DEV, 'tRPC auth.me');
  // tRPC's own Vary is kept beside ours.
  assert.ok(varies(trpc).includes('trpc-accept'), `Vary ${trpc.headers.get('vary')}`);

  const batch = await send(context, 'POST', '/trpc/auth.login?batch=1', { origin: LISTED }, { 0: { email: account.email, password: account.password } });
  assert.is(batch.status, 200);
  assertAllowed(batch, LISTED, 'tRPC batch');
});

test('error answers carry the CORS headers too, so the frontend can read its 401, 400, 404 or 415', async (context) => {
  const unauthorized = await send(context, 'GET', `${AUTH}/me`, { origin: LISTED });
  assertError(unauthorized, 401, 'UNAUTHORIZED');
  assertAllowed(unauthorized, LISTED, '401');
  assert.is(unauthorized.headers.get('www-authenticate'), 'Bearer');

  const trpcUnauthorized = await send(context, 'GET', '/trpc/auth.me', { origin: LISTED });
  assert.is(trpcUnauthorized.status, 401);
  assertAllowed(trpcUnauthorized, LISTED, 'tRPC 401');

  const invalid = await send(context, 'POST', `${AUTH}/login`, { origin: LISTED }, { email: 'not an address' });
  assertError(invalid, 400, 'VALIDATION_FAILED');
  assertAllowed(invalid, LISTED, '400');

  const notJson = await send(context, 'POST', `${AUTH}/login`, { origin: LISTED, 'content-type': 'text/plain' }, {});
  assert.is(notJson.status, 415);
  assertAllowed(notJson, LISTED, '415');

  const missing = await send(context, 'GET', '/api/v1/no-such-route', { origin: LISTED });
  assertError(missing, 404, 'NOT_FOUND');
  assertAllowed(missing, LISTED, '404');

  const badPath = await send(context, 'GET', `${AUTH}/me%00`, { origin: LISTED });
  assertError(badPath, 400, 'VALIDATION_FAILED');
  assertAllowed(badPath, LISTED, 'bad path');
});

test('an origin not listed gets no CORS header at all: its preflight is 204 without them, its requests are answered without them', async (context) => {
  const strangers = ['https://evil.example', 'https://app.example.com.evil.example', 'http://app.example.com', 'https://app.example.com:8443', 'http://localhost:5174', 'null'];
  for (const origin of strangers) {
    for (const path of API_PATHS) {
      const answer = await preflight(context, path, origin);
      assert.is(answer.status, 204, `${origin} ${path}`);
      assertNoCors(answer, `${origin} ${path} preflight`);
      assert.ok(varies(answer).includes('origin'));
    }
    const me = await send(context, 'GET', `${AUTH}/me`, { origin, ...bearer(context.account.apiKey) });
    assert.is(me.status, 200);
    assertNoCors(me, `${origin} /me`);
    assert.ok(varies(me).includes('origin'));
    const unauthorized = await send(context, 'GET', '/trpc/auth.me', { origin });
    assert.is(unauthorized.status, 401);
    assertNoCors(unauthorized, `${origin} tRPC 401`);
    assert.ok(varies(unauthorized).includes('origin'), `Vary ${unauthorized.headers.get('vary')}`);
  }
});

test('without an Origin, API answers still vary on it and carry no CORS header', async (context) => {
  for (const path of [`${AUTH}/me`, '/trpc/auth.me', '/api/v1/openapi.json']) {
    const answer = await send(context, 'GET', path, {});
    assertNoCors(answer, path);
    assert.ok(varies(answer).includes('origin'), `${path}: Vary ${answer.headers.get('vary')}`);
  }
});

test('webhooks, pages, health, metrics and the docs never send CORS headers, even to a listed origin', async (context) => {
  const paths = [
    '/billingprovider/webhook',
    '/webhook/payment/site_unknown',
    '/messengerone/webhook',
    `/messengerone/bot/${randomUUID()}`,
    `/messengertwo/bot/${randomUUID()}`,
    '/login',
    '/register',
    '/verify-email?token=abc',
    '/account',
    '/healthz',
    '/readyz',
    '/metrics',
    '/api/v1/docs',
    '/trpcx',
    '/api/v10/auth/me',
  ];
  for (const path of paths) {
    for (const answer of [
      await preflight(context, path, LISTED),
      await send(context, 'GET', path, { origin: LISTED, authorization: `Bearer ${METRICS_TOKEN}` }),
      await send(context, 'POST', path, { origin: LISTED }, { update_id: 1 }),
    ]) {
      assertNoCors(answer, `${path}: ${answer.status}`);
      assert.not.ok(varies(answer).includes('origin'), `${path}: Vary ${answer.headers.get('vary')}`);
    }
  }
  const docsPage = await send(context, 'GET', '/api/v1/docs', { origin: LISTED });
  const asset = /src="(\/api\/v1\/docs\/assets\/[^"]+)"/.exec(docsPage.text)![1];
  const served = await send(context, 'GET', asset, { origin: LISTED });
  assert.is(served.status, 200);
  assertNoCors(served, asset);
  assertNoCors(await preflight(context, asset, LISTED, 'GET'), `${asset} preflight`);
  assert.is((await send(context, 'GET', '/metrics', { authorization: `Bearer ${METRICS_TOKEN}`, origin: LISTED })).status, 200);
});

test('a cookie-authenticated write from a listed origin is accepted; from another one, refused', async (context) => {
  // An account of its own: the write signs out its other sessions.
  const owner = await registerAndVerify(context.service, 'cors.cookie@example.com');
  const login = await send(context, 'POST', `${AUTH}/login`, { origin: LISTED }, { email: owner.email, password: owner.password });
  const cookie = login.headers.getSetCookie().find((line) => line.startsWith('svc_token='))!.split(';')[0];
  const refused = await send(context, 'POST', `${AUTH}/sessions/revoke-all`, { origin: 'https://evil.example', cookie }, { keep_current: true });
  assertError(refused, 403, 'FORBIDDEN');
  assertNoCors(refused, 'refused write');
  const accepted = await send(context, 'POST', `${AUTH}/sessions/revoke-all`, { origin: LISTED, cookie }, { keep_current: true });
  assert.is(accepted.status, 200, accepted.text);
  assertAllowed(accepted, LISTED, 'cookie write');
});

test.run();
