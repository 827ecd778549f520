import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, loginFrom, registerAndVerify, registerForToken, requestFrom, type Account } from './helpers/auth.ts';
import type { HttpResult } from './helpers/service.ts';
import { startTestApp, type TestService } from './helpers/service.ts';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';

type Context = { service: TestService; xavier: Account; yvonne: Account };
const test = suite<Context>('REST rate limits (RATE_LIMITS=on), held in PostgreSQL');

test.before(async (context) => {
  context.service = await startTestApp({ RATE_LIMITS: 'on' });
  context.xavier = await registerAndVerify(context.service, 'xavier@example.com');
  context.yvonne = await registerAndVerify(context.service, 'yvonne@example.com');
  await registerForToken(context.service, 'ursula@example.com');
});
test.after(async ({ service }) => {
  await service?.close();
});

const MINUTE = 60_000;
const registerFrom = (service: TestService, ip: string, email: string) =>
  requestFrom(ip, service.url, 'POST', `${AUTH}/register`, { json: { email, password: PASSWORD, name: 'Rate Limited' } });
const resendFrom = (service: TestService, ip: string, email: string) =>
  requestFrom(ip, service.url, 'POST', `${AUTH}/resend-verification`, { json: { email } });

/**
 * A 429 with the error body and a Retry-After of exactly `seconds`. The service clock
 * only moves when a test moves it, so a window that opened at the current time has all of
 * its length left: a rule's Retry-After is its window unless the clock was advanced since.
 */
function assertLimited(result: HttpResult, seconds: number): number {
  assertError(result, 429, 'RATE_LIMITED');
  const header = result.headers.get('retry-after');
  assert.is(header, String(seconds), 'Retry-After');
  return Number(header);
}

async function repeat(times: number, work: (round: number) => Promise<HttpResult>, expected: number) {
  for (let round = 0; round < times; round++) {
    const result = await work(round);
    assert.is(result.status, expected, `attempt ${round + 1}: ${result.text}`);
  }
}

test('login: 10 attempts per account and IP in 15 minutes, whatever X-Forwarded-For says', async ({ service, xavier }) => {
  await repeat(10, () => loginFrom(service, '127.0.1.1', xavier.email), 401);
  const limited = await loginFrom(service, '127.0.1.1', xavier.email, xavier.password);
  assert.is(assertLimited(limited, 900), 900);
  assertLimited(await loginFrom(service, '127.0.1.1', xavier.email, xavier.password, { 'x-forwarded-for': '10.9.8.7' }), 900);
  assertLimited(await loginFrom(service, '127.0.1.1', 'XAVIER@example.com', xavier.password), 900);

  service.clock.advance(5 * MINUTE);
  assertLimited(await loginFrom(service, '127.0.1.1', xavier.email), 600);
  assert.is((await loginFrom(service, '127.0.1.1', 'someone.else@example.com')).status, 401);
  assert.is((await loginFrom(service, '127.0.1.2', xavier.email, xavier.password)).status, 200);

  service.clock.advance(10 * MINUTE);
  assert.is((await loginFrom(service, '127.0.1.1', xavier.email, xavier.password)).status, 200);
});

test('behind TRUST_PROXY=1, the client is the last X-Forwarded-For entry; entries a client adds further left do not count', async () => {
  const proxied = await startTestApp({ RATE_LIMITS: 'on', TRUST_PROXY: '1' });
  try {
    const account = await registerAndVerify(proxied, 'zelda@example.com');
    // Every request comes from the same socket address, as it does behind a load balancer.
    const via = (forwardedFor: string, password?: string) =>
      loginFrom(proxied, '127.0.9.1', account.email, password, { 'x-forwarded-for': forwardedFor });
    await repeat(10, () => via('203.0.113.7'), 401);
    assertLimited(await via('203.0.113.7', account.password), 900);
    assertLimited(await via('198.51.100.1, 203.0.113.7', account.password), 900);
    assert.is((await via('203.0.113.8', account.password)).status, 200, 'another client behind the same proxy');
    assert.is((await via('203.0.113.7, 203.0.113.9', account.password)).status, 200, 'the proxy saw 203.0.113.9');
  } finally {
    await proxied.close();
  }
});

test('successes are given back: a dozen sign-ins from one IP, with a second factor too, are never refused; failures still count', async ({ service }) => {
  const plain = await registerAndVerify(service, 'often.plain@example.com');
  for (let round = 0; round < 12; round++) assert.is((await loginFrom(service, '127.0.30.1', plain.email, PASSWORD)).status, 200, `sign-in ${round + 1}`);

  const twoStep = await registerAndVerify(service, 'often.totp@example.com');
  const setup = await requestFrom('127.0.30.2', service.url, 'POST', `${AUTH}/mfa/totp/setup`, { json: { password: PASSWORD }, headers: { authorization: `Bearer ${twoStep.token}` } });
  const enabled = await requestFrom('127.0.30.2', service.url, 'POST', `${AUTH}/mfa/totp/enable`, { json: { code: totpCodeAt(setup.body.secret, service.clock.now()) }, headers: { authorization: `Bearer ${twoStep.token}` } });
  assert.is(enabled.status, 200, enabled.text);
  for (let round = 0; round < 12; round++) {
    service.clock.advance(30_000);
    const first = await loginFrom(service, '127.0.30.2', twoStep.email, PASSWORD);
    assertError(first, 403, 'MFA_REQUIRED');
    const code = totpCodeAt(setup.body.secret, service.clock.now());
    const second = await requestFrom('127.0.30.2', service.url, 'POST', `${AUTH}/login/mfa`, { json: { mfa_token: first.body.mfa_token, code } });
    assert.is(second.status, 200, `sign-in ${round + 1}: ${second.text}`);
  }
  // A right password whose second step never came is no sign-in: it stays counted.
  for (let round = 0; round < 10; round++) assertError(await loginFrom(service, '127.0.30.3', twoStep.email, PASSWORD), 403, 'MFA_REQUIRED');
  assertError(await loginFrom(service, '127.0.30.3', twoStep.email, PASSWORD), 429, 'RATE_LIMITED');
  // Wrong codes count as wrong passwords do.
  const first = await loginFrom(service, '127.0.30.4', twoStep.email, PASSWORD);
  for (let round = 0; round < 4; round++) {
    assertError(await requestFrom('127.0.30.4', service.url, 'POST', `${AUTH}/login/mfa`, { json: { mfa_token: first.body.mfa_token, code: '000000' } }), 401, 'INVALID_CREDENTIALS');
  }
  const again = await loginFrom(service, '127.0.30.4', twoStep.email, PASSWORD);
  for (let round = 0; round < 4; round++) {
    assertError(await requestFrom('127.0.30.4', service.url, 'POST', `${AUTH}/login/mfa`, { json: { mfa_token: again.body.mfa_token, code: '000000' } }), 401, 'INVALID_CREDENTIALS');
  }
  assertError(await loginFrom(service, '127.0.30.4', twoStep.email, PASSWORD), 429, 'RATE_LIMITED');
});

test('step-up codes count per account and client: a stolen session cannot guess past the login limits', async ({ service }) => {
  const account = await registerAndVerify(service, 'stepup.guess@example.com');
  const auth = { authorization: `Bearer ${account.token}` };
  const setup = await requestFrom('127.0.30.5', service.url, 'POST', `${AUTH}/mfa/totp/setup`, { json: { password: PASSWORD }, headers: auth });
  await requestFrom('127.0.30.5', service.url, 'POST', `${AUTH}/mfa/totp/enable`, { json: { code: totpCodeAt(setup.body.secret, service.clock.now()) }, headers: auth });
  service.clock.advance(6 * MINUTE);
  const rotate = (code: string) => requestFrom('127.0.30.5', service.url, 'POST', `${AUTH}/api-key/rotate`, { json: { code }, headers: auth });
  for (let round = 0; round < 10; round++) assertError(await rotate('000000'), 400, 'INVALID_CODE');
  assertError(await rotate(totpCodeAt(setup.body.secret, service.clock.now())), 429, 'RATE_LIMITED');
  service.clock.advance(15 * MINUTE);
  assert.is((await rotate(totpCodeAt(setup.body.secret, service.clock.now()))).status, 200);
});

test('passkey sign-in options, public and a row each, are limited per IP like sign-ins', async ({ service }) => {
  const options = () => requestFrom('127.0.30.6', service.url, 'POST', `${AUTH}/login/passkey/options`, { json: {} });
  await repeat(100, options, 200);
  assertLimited(await options(), 900);
  const rows = await service.deps.db.query<{ count: string }>("SELECT count(*) AS count FROM mfa_challenges WHERE kind = 'passkey_login'");
  assert.ok(Number(rows[0].count) <= 100, `${rows[0].count} challenges kept`);
  assert.is((await requestFrom('127.0.30.7', service.url, 'POST', `${AUTH}/login/passkey/options`, { json: {} })).status, 200, 'another client is not held back');
});

test('login: 100 attempts per IP in 15 minutes, across addresses', async ({ service, xavier }) => {
  await repeat(100, (round) => loginFrom(service, '127.0.2.1', `spray.${round % 10}@example.com`), 401);
  assertLimited(await loginFrom(service, '127.0.2.1', xavier.email, xavier.password), 900);
  assertLimited(await loginFrom(service, '127.0.2.1', 'spray.fresh@example.com'), 900);
  assert.is((await loginFrom(service, '127.0.2.2', 'spray.fresh@example.com')).status, 401);
  assert.is((await loginFrom(service, '127.0.2.2', xavier.email, xavier.password)).status, 200);
});

/** 99 failures from ten addresses, then the 100th from an eleventh. */
async function failHundredTimes(service: TestService, subnet: string, email: string, between?: () => Promise<void>) {
  for (let host = 1; host <= 10; host++) {
    await repeat(host === 10 ? 9 : 10, () => loginFrom(service, `${subnet}.${host}`, email), 401);
  }
  await between?.();
  assert.is((await loginFrom(service, `${subnet}.11`, email)).status, 401);
}

test('login: at most 100 failed logins per account per hour; an unknown address locks the same way', async ({ service, yvonne }) => {
  await failHundredTimes(service, '127.0.3', yvonne.email, async () => {
    // After 99 failures the right password still works.
    assert.is((await loginFrom(service, '127.0.3.10', yvonne.email, yvonne.password)).status, 200);
  });
  const locked = await loginFrom(service, '127.0.3.12', yvonne.email, yvonne.password);
  const lockedFor = assertLimited(locked, 3600);

  await failHundredTimes(service, '127.0.4', 'nobody.here@example.com');
  const unknown = await loginFrom(service, '127.0.4.12', 'nobody.here@example.com', yvonne.password);
  assert.is(assertLimited(unknown, 3600), lockedFor);
  assert.equal(unknown.body, locked.body);

  service.clock.advance(60 * MINUTE);
  assert.is((await loginFrom(service, '127.0.3.12', yvonne.email, yvonne.password)).status, 200);
});

test('register: 5 per address per hour; Retry-After is the same for a taken and a new address', async ({ service, yvonne }) => {
  await repeat(5, () => registerFrom(service, '127.0.5.1', yvonne.email), 201);
  await repeat(5, () => registerFrom(service, '127.0.5.2', 'newcomer@example.com'), 201);
  const taken = await registerFrom(service, '127.0.5.1', yvonne.email);
  const fresh = await registerFrom(service, '127.0.5.2', 'newcomer@example.com');
  assert.is(assertLimited(taken, 3600), assertLimited(fresh, 3600));
  assert.equal(taken.body, fresh.body);
  assertLimited(await registerFrom(service, '127.0.5.3', 'Newcomer@Example.com'), 3600);
  assert.is((await registerFrom(service, '127.0.5.1', 'another.newcomer@example.com')).status, 201);
});

test('register: 20 per IP per hour', async ({ service }) => {
  await repeat(20, (round) => registerFrom(service, '127.0.6.1', `crowd.${round}@example.com`), 201);
  assertLimited(await registerFrom(service, '127.0.6.1', 'crowd.extra@example.com'), 3600);
  assert.is((await registerFrom(service, '127.0.6.2', 'crowd.extra@example.com')).status, 201);
});

test('resend: 5 per address per hour; Retry-After is the same for a known and an unknown address', async ({ service }) => {
  await repeat(5, () => resendFrom(service, '127.0.7.1', 'ursula@example.com'), 200);
  await repeat(5, () => resendFrom(service, '127.0.7.2', 'no.such.person@example.com'), 200);
  const known = await resendFrom(service, '127.0.7.1', 'ursula@example.com');
  const unknown = await resendFrom(service, '127.0.7.2', 'no.such.person@example.com');
  assert.is(assertLimited(known, 3600), assertLimited(unknown, 3600));
  assert.equal(known.body, unknown.body);
  assertLimited(await resendFrom(service, '127.0.7.3', 'ursula@example.com'), 3600);
});

test('resend: 20 per IP per hour', async ({ service }) => {
  await repeat(20, (round) => resendFrom(service, '127.0.8.1', `asker.${round}@example.com`), 200);
  assertLimited(await resendFrom(service, '127.0.8.1', 'asker.extra@example.com'), 3600);
  assert.is((await resendFrom(service, '127.0.8.2', 'asker.extra@example.com')).status, 200);
});

test('the limits are counted in PostgreSQL', async ({ service }) => {
  await repeat(3, (round) => resendFrom(service, '127.0.11.1', `counted.${round}@example.com`), 200);
  const rows = await service.deps.db.query<{ key: string; hits: number }>('SELECT key, hits FROM rate_limits WHERE key LIKE $1', ['resend-ip:%']);
  assert.ok(rows.some((row) => row.key === 'resend-ip:127.0.11.1' && row.hits === 3), JSON.stringify(rows));
});

test('the windows end: an hour later everything is allowed again', async ({ service }) => {
  // Limits of its own reached first, on addresses and IPs no other test uses.
  await repeat(5, () => registerFrom(service, '127.0.12.1', 'later.comer@example.com'), 201);
  assertLimited(await registerFrom(service, '127.0.12.1', 'later.comer@example.com'), 3600);
  await repeat(20, (round) => registerFrom(service, '127.0.12.2', `later.crowd.${round}@example.com`), 201);
  assertLimited(await registerFrom(service, '127.0.12.2', 'later.crowd.extra@example.com'), 3600);
  await repeat(5, () => resendFrom(service, '127.0.12.3', 'later.asker@example.com'), 200);
  assertLimited(await resendFrom(service, '127.0.12.3', 'later.asker@example.com'), 3600);
  await repeat(100, (round) => loginFrom(service, '127.0.12.4', `later.spray.${round % 10}@example.com`), 401);
  assertLimited(await loginFrom(service, '127.0.12.4', 'later.spray.0@example.com'), 900);

  service.clock.advance(60 * MINUTE + 1000);
  assert.is((await registerFrom(service, '127.0.12.1', 'later.comer@example.com')).status, 201);
  assert.is((await registerFrom(service, '127.0.12.2', 'later.crowd.later@example.com')).status, 201);
  assert.is((await resendFrom(service, '127.0.12.3', 'later.asker@example.com')).status, 200);
  assert.is((await loginFrom(service, '127.0.12.4', 'later.spray.0@example.com')).status, 401);
});

test.run();
