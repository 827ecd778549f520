import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, bearer, loginFrom, me, nextMail, register, registerAndVerify, setCookieValue, type Account } from './helpers/auth.ts';
import { checkedForFaults } from './helpers/faults.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';

// The security review's attacks (issue 10), tried the way it tried them: over HTTP against a
// running service with rate limits on, on the real database.

type Context = { service: TestService; owner: Account };
const test = checkedForFaults(suite<Context>('REST security review: every confirmed attack now fails'));

const EVIL = 'https://evil.example';
const TRUSTED = 'https://app.example';

test.before(async (context) => {
  context.service = await startTestApp({ RATE_LIMITS: 'on', CORS_ORIGINS: TRUSTED });
  context.owner = await registerAndVerify(context.service, 'owner@example.com');
});
test.after(async ({ service }) => {
  await service?.close();
});

/** `count` wrong guesses at `email`, at most 9 per address so the per-client limits stay out of it. */
async function failFrom(service: TestService, subnet: string, email: string, count: number): Promise<void> {
  for (let sent = 0; sent < count; sent++) {
    const result = await loginFrom(service, `${subnet}.${1 + Math.floor(sent / 9)}`, email);
    assert.is(result.status, 401, `guess ${sent + 1}: ${result.text}`);
  }
}

test('concurrent guesses cannot overshoot the failed-login cap: 12 at once with 5 left get exactly 5 password checks', async ({ service }) => {
  const target = await registerAndVerify(service, 'race@example.com');
  await failFrom(service, '127.0.40', target.email, 95);
  const guesses = await Promise.all(Array.from({ length: 12 }, (_, i) => loginFrom(service, `127.0.41.${i + 1}`, target.email)));
  const statuses = guesses.map((guess) => guess.status).sort();
  assert.equal(statuses, [...Array(5).fill(401), ...Array(7).fill(429)]);
  for (const guess of guesses.filter((g) => g.status === 429)) assertError(guess, 429, 'RATE_LIMITED');
});

test('a locked account still lets in the owner on a device that logged in before; strangers and new devices stay out', async ({ service }) => {
  const account = await registerAndVerify(service, 'device.owner@example.com');
  const first = await loginFrom(service, '127.0.50.1', account.email, account.password);
  const device = setCookieValue(first, 'svc_device');
  assert.ok(device, 'login sets svc_device');
  await failFrom(service, '127.0.51', account.email, 100);

  assertError(await loginFrom(service, '127.0.52.1', account.email, account.password), 429, 'RATE_LIMITED');
  // From an address the attack has exhausted, even: the device is limited only by itself.
  const owner = await loginFrom(service, '127.0.51.1', account.email, account.password, { cookie: `svc_device=${device}` });
  assert.is(owner.status, 200, owner.text);
  assert.is(setCookieValue(owner, 'svc_device'), undefined, 'a known device keeps its cookie');

  const tampered = `${device!.slice(0, -2)}${device!.endsWith('AA') ? 'BB' : 'AA'}`;
  assertError(await loginFrom(service, '127.0.52.2', account.email, account.password, { cookie: `svc_device=${tampered}` }), 429, 'RATE_LIMITED');
  const otherDevice = setCookieValue(await loginFrom(service, '127.0.50.2', 'owner@example.com', PASSWORD), 'svc_device');
  assertError(await loginFrom(service, '127.0.52.3', account.email, account.password, { cookie: `svc_device=${otherDevice}` }), 429, 'RATE_LIMITED');
});

test('a stolen device cookie gets ten guesses of its own, then it is a stranger like any other', async ({ service }) => {
  const account = await registerAndVerify(service, 'device.stolen@example.com');
  const device = setCookieValue(await loginFrom(service, '127.0.60.1', account.email, account.password), 'svc_device');
  await failFrom(service, '127.0.61', account.email, 100);
  const withDevice = (password?: string) => loginFrom(service, '127.0.62.1', account.email, password, { cookie: `svc_device=${device}` });
  for (let guess = 1; guess <= 10; guess++) assert.is((await withDevice()).status, 401, `device guess ${guess}`);
  assertError(await withDevice(), 429, 'RATE_LIMITED');
  assertError(await withDevice(account.password), 429, 'RATE_LIMITED');
});

test('IPv6 clients count by their /64: new addresses in the same /64 are the same client', async () => {
  const proxied = await startTestApp({ RATE_LIMITS: 'on', TRUST_PROXY: '1' });
  try {
    const account = await registerAndVerify(proxied, 'six@example.com');
    const via = (address: string, password?: string) => loginFrom(proxied, '127.0.70.1', account.email, password, { 'x-forwarded-for': address });
    for (let host = 1; host <= 10; host++) assert.is((await via(`2001:db8:aa:1::${host.toString(16)}`)).status, 401);
    assertError(await via('2001:db8:aa:1:ffff:ffff:ffff:ffff', account.password), 429, 'RATE_LIMITED');
    assertError(await via('2001:0db8:00aa:0001::1', account.password), 429, 'RATE_LIMITED');
    assert.is((await via('2001:db8:aa:2::1', account.password)).status, 200, 'the next /64 is another client');
  } finally {
    await proxied.close();
  }
});

test('a display name or a hidden second address is not an e-mail address; mail goes to the bare address only', async ({ service }) => {
  const hidden = ['ceo\uff20corp.example<attacker@evil.example>', '"CEO" <ceo@corp.example>', 'ceo@corp.example, attacker@evil.example', 'ceo@corp.example <attacker@evil.example>', 'ceo@[127.0.0.1]'];
  for (const email of hidden) {
    for (const route of ['register', 'resend-verification', 'login']) {
      const result = await request(service.url, 'POST', `${AUTH}/${route}`, { json: { email, password: PASSWORD, name: 'Hidden' } });
      assertError(result, 400, 'VALIDATION_FAILED');
    }
  }
  assert.is(service.smtp.mailsTo('attacker@evil.example').length, 0);
  assert.ok(!service.smtp.inbox.some((mail) => mail.envelopeTo.includes('attacker@evil.example')));

  assert.is((await register(service, { email: 'Bare.Person@Example.com', password: PASSWORD, name: 'Bare' })).status, 201);
  const mail = await nextMail(service, 'bare.person@example.com', 0);
  assert.equal(mail.envelopeTo, ['bare.person@example.com']);
});

test('addresses and passwords are NFC: the composed and decomposed forms are one account and one password', async ({ service }) => {
  const composed = 'jos\u00e9@example.com';
  const decomposed = 'jose\u0301@example.com';
  const account = await registerAndVerify(service, composed, { password: 'caf\u00e9 au lait' });
  assert.is(account.user.email, composed);
  assert.is((await request(service.url, 'POST', `${AUTH}/login`, { json: { email: decomposed, password: 'cafe\u0301 au lait' } })).status, 200);
});

test('NUL and other control characters are a 400 wherever they come, never a 5xx', async ({ service, owner }) => {
  assertError(await request(service.url, 'POST', `${AUTH}/login`, { json: { email: 'nul\u0000@example.com', password: PASSWORD } }), 400, 'VALIDATION_FAILED');
  assertError(await request(service.url, 'POST', `${AUTH}/login`, { json: { email: owner.email, password: `pass\u0000word` } }), 400, 'VALIDATION_FAILED');
  assertError(await request(service.url, 'POST', `${AUTH}/resend-verification`, { json: { email: 'nul\u0000@example.com' } }), 400, 'VALIDATION_FAILED');
  const named = await request(service.url, 'POST', `${AUTH}/register`, { json: { email: 'ctl@example.com', password: PASSWORD, name: 'Line\u0007Bell' } });
  assertError(named, 400, 'VALIDATION_FAILED');
  assert.equal(named.body.issues.map((issue: { path: string }) => issue.path), ['name']);
  const trpc = await request(service.url, 'POST', '/trpc/sites.create', { json: { name: 'Shop\u0000', paymentWebhookSecret: 'whsec_0123456789' }, headers: bearer(owner.token) });
  assert.is(trpc.status, 400);
  assert.is(trpc.body.error.data.appCode, 'VALIDATION_FAILED');
  assertError(await request(service.url, 'POST', '/webhook/payment/site_%00x', { body: '{}', headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' } }), 400, 'VALIDATION_FAILED');
  assertError(await request(service.url, 'POST', '/messengertwo/bot/%E0%A4%A', { body: '{}' }), 400, 'VALIDATION_FAILED');
  // In a header value, Node's parser meets it first: tests/gateway.sockets.http.test.ts.
});

test('a cross-site request that rides on the cookie changes nothing; public routes and Bearer calls are not affected', async ({ service }) => {
  const account = await registerAndVerify(service, 'csrf@example.com');
  const cookie = `svc_token=${account.token}`;
  const site = { name: 'Shop', paymentWebhookSecret: 'whsec_0123456789abcdef' };
  const sites = async () => (await request(service.url, 'GET', '/trpc/sites.list', { headers: bearer(account.token) })).body.result.data.items;

  const refused = async (headers: Record<string, string>) => {
    const result = await request(service.url, 'POST', '/trpc/sites.create', { json: site, headers: { cookie, ...headers } });
    assert.is(result.status, 403, result.text);
    assert.is(result.body.error.data.appCode, 'FORBIDDEN');
  };
  await refused({ origin: EVIL });
  await refused({ 'sec-fetch-site': 'cross-site' });
  await refused({ origin: 'null' });
  const form = await request(service.url, 'POST', '/trpc/sites.create', { body: 'name=Shop', headers: { cookie, 'content-type': 'text/plain' } });
  assert.is(form.status, 415);
  assert.equal(await sites(), []);

  // What an HTML form can send: urlencoded, multipart or text/plain, and here with no body at all.
  for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain']) {
    assertError(await request(service.url, 'POST', `${AUTH}/logout`, { body: '', headers: { cookie, 'content-type': type } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  }
  assertError(await request(service.url, 'POST', `${AUTH}/logout`, { headers: { cookie } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  assertError(await request(service.url, 'POST', `${AUTH}/logout`, { json: {}, headers: { cookie, origin: EVIL } }), 403, 'FORBIDDEN');
  assert.is((await me(service, { cookie })).status, 200, 'the session survived every one of them');
  // Register authenticates nobody: a cookie the browser happens to send changes nothing about it.
  const registered = await request(service.url, 'POST', `${AUTH}/register`, { json: { email: 'newcomer.csrf@example.com', password: PASSWORD, name: 'New' }, headers: { cookie, origin: EVIL } });
  assert.is(registered.status, 201);

  assert.is((await request(service.url, 'POST', '/trpc/sites.create', { json: site, headers: { cookie, origin: TRUSTED } })).status, 200);
  assert.is((await request(service.url, 'POST', '/trpc/sites.create', { json: site, headers: { ...bearer(account.token), origin: EVIL } })).status, 200, 'Bearer is not ambient');
  assert.is((await sites()).length, 2);
  const sameOrigin = await request(service.url, 'POST', `${AUTH}/logout`, { headers: { cookie, origin: service.url, 'content-type': 'application/json' } });
  assert.is(sameOrigin.status, 200, sameOrigin.text);
});

test('a tRPC batch carries at most 16 calls', async ({ service, owner }) => {
  const batch = (size: number) =>
    request(service.url, 'GET', `/trpc/${Array(size).fill('auth.me').join(',')}?batch=1&input=${encodeURIComponent('{}')}`, { headers: bearer(owner.token) });
  const sixteen = await batch(16);
  assert.is(sixteen.status, 200);
  assert.is(sixteen.body.length, 16);
  const seventeen = await batch(17);
  assert.is(seventeen.status, 400);
  assert.is(seventeen.body[0]?.error?.data?.appCode ?? seventeen.body.error?.data?.appCode, 'VALIDATION_FAILED');
  assert.is((await batch(200)).status, 400);
});

test('answers with a token or key are never cached; every page refuses framing and sniffing', async ({ service, owner }) => {
  const login = await request(service.url, 'POST', `${AUTH}/login`, { json: { email: owner.email, password: owner.password } });
  // The router matches paths in any case: so does the rule.
  const shouted = [await request(service.url, 'GET', '/API/V1/auth/me', { headers: bearer(owner.apiKey) }), await request(service.url, 'GET', '/TRPC/auth.me', { headers: bearer(owner.token) })];
  for (const answer of [login, await me(service, bearer(owner.apiKey)), await request(service.url, 'GET', '/trpc/auth.me', { headers: bearer(owner.token) }), ...shouted]) {
    assert.is(answer.status, 200);
    assert.is(answer.headers.get('cache-control'), 'no-store');
  }
  for (const path of ['/verify-email?token=abc', '/api/v1/docs']) {
    const page = await request(service.url, 'GET', path);
    assert.is(page.status, 200);
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'"]) assert.match(csp, directive, `${path}: ${csp}`);
    // The e-mailed links' pages run no script at all; the docs page (Swagger UI) only its own files.
    if (path === '/api/v1/docs') assert.match(csp, /(^|; )script-src 'self'(;|$)/);
    else assert.not.match(csp, /script-src/);
    assert.not.match(csp, /unsafe-inline|unsafe-eval|\*/);
    assert.is(page.headers.get('x-content-type-options'), 'nosniff');
  }
});

test('a JSON body that is not UTF-8 is 400 on REST and tRPC, and nothing is stored under a name with U+FFFD in it', async ({ service }) => {
  const body = (email: string) => Buffer.concat([Buffer.from(`{"email":"${email}`), Buffer.from([0xff]), Buffer.from(`@example.com","password":"${PASSWORD}","name":"B\xff"}`)]);
  const rest = await request(service.url, 'POST', `${AUTH}/register`, { body: body('utf8.rest'), headers: { 'content-type': 'application/json' } });
  assert.is(rest.status, 400, rest.text);
  assert.equal([rest.body.code, rest.body.message], ['INVALID_JSON', 'The request body is not valid UTF-8.']);
  const trpc = await request(service.url, 'POST', '/trpc/auth.register', { body: body('utf8.trpc'), headers: { 'content-type': 'application/json' } });
  assert.is(trpc.status, 400, trpc.text);
  assert.match(trpc.text, 'The request body is not valid UTF-8.');
  const stored = await service.deps.db.query(`SELECT 1 FROM accounts WHERE email LIKE 'utf8.%'`);
  assert.is(stored.length, 0);
});

test.run();
