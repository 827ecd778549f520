import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeJwt } from 'jose';
import { AUTH, assertError, bearer, loginFrom, registerAndVerify, setCookieValue } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { createVisitor } from './helpers/pages.ts';

const PUBLIC_URL = 'https://gatehouse.example';
const HSTS = 'max-age=31536000';

const test = suite<{ service: TestService }>('REST behind https: PUBLIC_URL=https://… and JWT_TTL=12h');

test.before(async (context) => {
  // Rate limits on: the device cookie matters only to the failed-login cap.
  context.service = await startTestApp({ PUBLIC_URL: `${PUBLIC_URL}/`, JWT_TTL: '12h', RATE_LIMITS: 'on' });
});
test.after(async ({ service }) => {
  await service?.close();
});

/** One answer of each kind the gateway gives: the API and its errors, a page, a webhook, health, an unknown path. */
const ANSWERS: Array<[string, string, number]> = [
  ['GET', `${AUTH}/me`, 401],
  ['GET', `${AUTH}/x%00y`, 400],
  ['GET', '/trpc/auth.me', 401],
  ['GET', '/login', 200],
  ['POST', '/billingprovider/webhook', 503],
  ['GET', '/healthz', 200],
  ['GET', '/no/such/path', 404],
];

test('the session cookie adds Secure and keeps its name; the device cookie is __Host-svc_device (Secure, Path=/, no Domain)', async ({ service }) => {
  const account = await registerAndVerify(service, 'secure@example.com');
  const login = await request(service.url, 'POST', `${AUTH}/login`, { json: { email: account.email, password: account.password } });
  const [session, device, ...others] = login.headers.getSetCookie();
  assert.is(session, `svc_token=${login.body.token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=43200; Secure`);
  assert.match(device, new RegExp(`^__Host-svc_device=d1\\.${account.user.id}\\.[\\w-]{22}\\.[\\w-]{43}; Path=/; HttpOnly; SameSite=Lax; Max-Age=31536000; Secure$`));
  assert.not.match(device, /domain=/i);
  assert.equal(others, []);
  const logout = await request(service.url, 'POST', `${AUTH}/logout`, { headers: bearer(login.body.token) });
  assert.equal(logout.headers.getSetCookie(), ['svc_token=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure']);
});

test('over https every cookie but svc_token is __Host-: the pages\' visitor id too, and a form posts with it', async ({ service }) => {
  const visitor = createVisitor(service);
  const shown = await visitor.get('/login');
  const cookies = shown.headers.getSetCookie();
  assert.is(cookies.length, 1, cookies.join('\n'));
  assert.match(cookies[0], /^__Host-svc_visitor=[\w-]{22}; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
  const account = await registerAndVerify(service, 'host.visitor@example.com');
  const signedIn = await visitor.post('/login', { email: account.email, password: account.password }, { origin: PUBLIC_URL });
  assert.is(signedIn.status, 303, signedIn.text.slice(0, 300));
  const set = signedIn.headers.getSetCookie();
  assert.ok(set.some((line) => line.startsWith('svc_token=')), set.join('\n'));
  for (const line of set) assert.ok(line.startsWith('svc_token=') || line.startsWith('__Host-'), line);
  // A form without the __Host- visitor cookie is refused: the plain name is not read.
  const id = visitor.cookies.get('__Host-svc_visitor')!;
  visitor.cookies.delete('__Host-svc_visitor');
  visitor.cookies.set('svc_visitor', id);
  assert.is((await visitor.post('/logout', {}, { origin: PUBLIC_URL })).status, 403);
});

test('PUBLIC_URL is the JWT issuer and audience, and the base of mailed links', async ({ service }) => {
  const account = await registerAndVerify(service, 'issuer@example.com');
  const claims = decodeJwt(account.token);
  assert.is(claims.iss, PUBLIC_URL);
  assert.is(claims.aud, PUBLIC_URL);
  assert.is(claims.exp! - claims.iat!, 43200);
  assert.match(service.smtp.mailsTo(account.email)[0].text, `${PUBLIC_URL}/verify-email?token=`);
});

test('every answer carries Strict-Transport-Security: the API and its errors, pages, webhooks, health', async ({ service }) => {
  for (const [method, path, status] of ANSWERS) {
    const answer = await request(service.url, method, path, method === 'POST' ? { json: {} } : {});
    assert.is(answer.status, status, `${method} ${path}: ${answer.text.slice(0, 200)}`);
    assert.is(answer.headers.get('strict-transport-security'), HSTS, `${method} ${path}`);
  }
});

/** `count` wrong guesses at `email`, at most 9 per address so the per-client limits stay out of it. */
async function failFrom(service: TestService, subnet: string, email: string, count: number): Promise<void> {
  for (let sent = 0; sent < count; sent++) {
    const result = await loginFrom(service, `${subnet}.${1 + Math.floor(sent / 9)}`, email);
    assert.is(result.status, 401, `guess ${sent + 1}: ${result.text}`);
  }
}

test('a locked account lets its owner in by the __Host- device cookie, and by a svc_device one set before https', async ({ service }) => {
  const account = await registerAndVerify(service, 'device.https@example.com');
  const first = await loginFrom(service, '127.0.70.1', account.email, account.password);
  const device = setCookieValue(first, '__Host-svc_device');
  assert.ok(device, 'login sets __Host-svc_device');
  assert.is(setCookieValue(first, 'svc_device'), undefined, 'and no plain svc_device');
  await failFrom(service, '127.0.71', account.email, 100);

  assertError(await loginFrom(service, '127.0.72.1', account.email, account.password), 429, 'RATE_LIMITED');
  const byHostCookie = await loginFrom(service, '127.0.71.1', account.email, account.password, { cookie: `__Host-svc_device=${device}` });
  assert.is(byHostCookie.status, 200, byHostCookie.text);
  assert.is(setCookieValue(byHostCookie, '__Host-svc_device'), undefined, 'a known device keeps its cookie');
  // The same signed value under the name it had over http, before the switch to https.
  const byOldCookie = await loginFrom(service, '127.0.71.2', account.email, account.password, { cookie: `svc_device=${device}` });
  assert.is(byOldCookie.status, 200, byOldCookie.text);
  assert.is(setCookieValue(byOldCookie, '__Host-svc_device'), undefined, 'a device known by its old cookie is known');

  const tampered = `${device!.slice(0, -2)}${device!.endsWith('AA') ? 'BB' : 'AA'}`;
  assertError(await loginFrom(service, '127.0.72.2', account.email, account.password, { cookie: `__Host-svc_device=${tampered}` }), 429, 'RATE_LIMITED');
  assertError(await loginFrom(service, '127.0.72.3', account.email, account.password, { cookie: `svc_device=${tampered}` }), 429, 'RATE_LIMITED');
});

test.run();

const plain = suite<{ service: TestService }>('REST over plain http: no HSTS, the device cookie keeps its plain name');

plain.before(async (context) => {
  context.service = await startTestApp();
});
plain.after(async ({ service }) => {
  await service?.close();
});

plain('no answer carries Strict-Transport-Security', async ({ service }) => {
  for (const [method, path, status] of ANSWERS) {
    const answer = await request(service.url, method, path, method === 'POST' ? { json: {} } : {});
    assert.is(answer.status, status, `${method} ${path}: ${answer.text.slice(0, 200)}`);
    assert.is(answer.headers.get('strict-transport-security'), null, `${method} ${path}`);
    assert.is(answer.headers.get('x-content-type-options'), 'nosniff', `${method} ${path}`);
  }
});

plain('the device cookie is svc_device, without Secure', async ({ service }) => {
  const account = await registerAndVerify(service, 'plain@example.com');
  const login = await request(service.url, 'POST', `${AUTH}/login`, { json: { email: account.email, password: account.password } });
  const device = login.headers.getSetCookie().find((line) => line.includes('svc_device='));
  assert.match(device!, new RegExp(`^svc_device=d1\\.${account.user.id}\\.[\\w-]{22}\\.[\\w-]{43}; Path=/; HttpOnly; SameSite=Lax; Max-Age=31536000$`));
});

plain.run();
