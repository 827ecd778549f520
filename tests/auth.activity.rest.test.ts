import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, bearer, login, loginFrom, nextMail, registerAndVerify } from './helpers/auth.ts';
import { activityItems, type ActivityItem } from './helpers/accounts.ts';
import { request, startTestApp, type HttpResult, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';

// GET /api/v1/auth/activity (docs/API.md, Account lifecycle) over REST: what HTTP adds to the rules
// tested in process in tests/auth.activity.caller.test.ts. Credentials, each request's own address
// and user agent on the event it records, and the lockout the limits per client IP record.

const MINUTE = 60_000;


const activity = (service: TestService, headers: Record<string, string>) => request(service.url, 'GET', `${AUTH}/activity`, { headers });

/** The activity list, its shape checked (activityItems). */
async function itemsOf(service: TestService, headers: Record<string, string>): Promise<ActivityItem[]> {
  return activityItems(await activity(service, headers));
}

const now = (service: TestService) => service.clock.now().toISOString();


const count = async (service: TestService, sql: string, params: unknown[] = []): Promise<number> =>
  (await service.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0].n;

// ------------------------------------------------------------------ the main service

const test = suite<{ service: TestService }>('REST activity: GET /api/v1/auth/activity (AUDIT_RETENTION_DAYS=30)');

test.before(async (context) => {
  context.service = await startTestApp({ AUDIT_RETENTION_DAYS: '30' });
});
test.after(async ({ service }) => {
  await service?.close();
});

test('without credentials, or with an invalid one, it is 401 UNAUTHORIZED', async ({ service }) => {
  const anonymous = await activity(service, {});
  assertError(anonymous, 401, 'UNAUTHORIZED');
  assert.is(anonymous.headers.get('www-authenticate'), 'Bearer');
  assertError(await activity(service, bearer('not.a.jwt')), 401, 'UNAUTHORIZED');
  assertError(await activity(service, bearer('f'.repeat(64))), 401, 'UNAUTHORIZED');
  assertError(await activity(service, { cookie: 'svc_token=garbage' }), 401, 'UNAUTHORIZED');
});

test('one account\'s life, step by step: each action is listed once, newest first, at the service clock\'s time, from 127.0.0.1, with the user agent of its own request', async ({ service }) => {
  const email = 'activity.walk@example.com';
  const newEmail = 'activity.walk.moved@example.com';
  const expected: ActivityItem[] = [];
  /** One step: the clock moves a minute, the request goes out with its own user agent, and the event it should record is noted. */
  async function step(event: string | undefined, userAgent: string, method: string, path: string, options: { json?: unknown; headers?: Record<string, string> } = {}): Promise<HttpResult> {
    service.clock.advance(MINUTE);
    const at = now(service);
    const result = await request(service.url, method, `${AUTH}/${path}`, { ...options, headers: { ...options.headers, 'user-agent': userAgent } });
    if (event) expected.push({ event, at, ip: '127.0.0.1', user_agent: userAgent });
    return result;
  }

  const seen = service.smtp.mailsTo(email).length;
  assert.is((await step('account.registered', 'walk/1 register', 'POST', 'register', { json: { email, password: PASSWORD, name: 'Walker' } })).status, 201);
  const verifyToken = linkToken(await nextMail(service, email, seen));
  assert.is((await step('email.verified', 'walk/2 verify', 'POST', 'verify-email', { json: { token: verifyToken } })).status, 200);
  assertError(await step('login.failed', 'walk/3 wrong password', 'POST', 'login', { json: { email, password: 'not the password' } }), 401, 'INVALID_CREDENTIALS');
  const first = await step('login.succeeded', 'Mozilla/5.0 (X11; Linux x86_64) walk/4 first login', 'POST', 'login', { json: { email, password: PASSWORD } });
  assert.is(first.status, 200);
  assert.is((await step('logout', 'walk/5 logout', 'POST', 'logout', { headers: bearer(first.body.token) })).status, 200);
  const second = await step('login.succeeded', 'walk/6 second login', 'POST', 'login', { json: { email, password: PASSWORD } });
  assert.is(second.status, 200);
  const session = bearer(second.body.token);
  const secondPassword = 'a second password, longer';
  assert.is((await step('password.changed', 'walk/7 change password', 'POST', 'password/change', { headers: session, json: { current_password: PASSWORD, new_password: secondPassword } })).status, 200);
  const rotated = await step('api_key.rotated', 'walk/8 rotate key', 'POST', 'api-key/rotate', { headers: session, json: {} });
  assert.is(rotated.status, 200);
  const apiKey = bearer(rotated.body.api_key);
  // Another login, whose session the second one then ends.
  const other = await step('login.succeeded', 'walk/9 another device', 'POST', 'login', { json: { email, password: secondPassword } });
  assert.is(other.status, 200);
  const sessions = await request(service.url, 'GET', `${AUTH}/sessions`, { headers: session });
  const otherSession = sessions.body.sessions.find((s: { current: boolean; user_agent: string }) => !s.current && s.user_agent === 'walk/9 another device');
  assert.ok(otherSession, sessions.text);
  assert.is((await step('session.revoked', 'walk/10 revoke one', 'DELETE', `sessions/${otherSession.id}`, { headers: session })).status, 200);
  const all = await step('session.revoked', 'walk/11 revoke all', 'POST', 'sessions/revoke-all', { headers: session, json: { keep_current: false } });
  assert.equal(all.body, { success: true, revoked: 1 });

  // Asking for a reset is no event; using the link is.
  assert.is((await step(undefined, 'walk/12 forgot', 'POST', 'password/forgot', { json: { email } })).status, 200);
  const resetToken = linkToken(await nextMail(service, email, 0, /\/reset-password\?token=/), '/reset-password');
  const thirdPassword = 'a third password, longer still';
  assert.is((await step('password.reset', 'walk/13 reset', 'POST', 'password/reset', { json: { token: resetToken, password: thirdPassword } })).status, 200);

  assert.is((await step('email.change_requested', 'walk/14 change e-mail', 'POST', 'email/change', { headers: apiKey, json: { new_email: newEmail, password: thirdPassword } })).status, 200);
  const confirmToken = linkToken(await nextMail(service, newEmail, 0, /\/confirm-email\?token=/), '/confirm-email');
  assert.is((await step('email.changed', 'walk/15 confirm e-mail', 'POST', 'email/confirm', { json: { token: confirmToken } })).status, 200);

  const items = await itemsOf(service, apiKey);
  assert.equal(items, [...expected].reverse());
  assert.equal(items.map((item) => item.event), [
    'email.changed',
    'email.change_requested',
    'password.reset',
    'session.revoked',
    'session.revoked',
    'login.succeeded',
    'api_key.rotated',
    'password.changed',
    'login.succeeded',
    'logout',
    'login.succeeded',
    'login.failed',
    'email.verified',
    'account.registered',
  ]);

  // The same list by a fresh JWT and by the cookie (the login adds itself on top).
  service.clock.advance(MINUTE);
  const fresh = await login(service, newEmail, thirdPassword);
  assert.is(fresh.status, 200);
  const byJwt = await itemsOf(service, bearer(fresh.body.token));
  assert.equal(byJwt.slice(1), items);
  assert.equal(byJwt[0].event, 'login.succeeded');
  assert.equal(byJwt[0].at, now(service));
  assert.equal(await itemsOf(service, { cookie: `svc_token=${fresh.body.token}` }), byJwt);
});

test.run();

// ------------------------------------------------------------------ lockout (RATE_LIMITS=on)

const locked = suite<{ service: TestService }>('REST activity with rate limits on: login.locked');

locked.before(async (context) => {
  context.service = await startTestApp({ RATE_LIMITS: 'on' });
});
locked.after(async ({ service }) => {
  await service?.close();
});

locked('when the account-wide failed-login cap refuses an attempt (429), login.locked is recorded with that client\'s address', async ({ service }) => {
  const account = await registerAndVerify(service, 'activity.locked@example.com');
  // 100 failures from ten addresses (ten each: the per account+IP limit), every one recorded.
  for (let host = 1; host <= 10; host++) {
    for (let i = 0; i < 10; i++) {
      service.clock.advance(1_000);
      const result = await loginFrom(service, `127.0.5.${host}`, account.email, 'wrong password', { 'user-agent': `guesser/${host}` });
      assert.is(result.status, 401, `host ${host}, attempt ${i + 1}: ${result.text}`);
    }
  }
  service.clock.advance(1_000);
  const lockedAt = now(service);
  const refused = await loginFrom(service, '127.0.5.11', account.email, PASSWORD, { 'user-agent': 'owner-browser/1.0' });
  assertError(refused, 429, 'RATE_LIMITED');

  const items = await itemsOf(service, bearer(account.apiKey));
  assert.is(items.length, 100);
  assert.equal(items[0], { event: 'login.locked', at: lockedAt, ip: '127.0.5.11', user_agent: 'owner-browser/1.0' });
  assert.ok(items.slice(1).every((item) => item.event === 'login.failed'), 'the 99 newest failures follow');
  assert.equal(items[1], { event: 'login.failed', at: new Date(service.clock.now().getTime() - 1_000).toISOString(), ip: '127.0.5.10', user_agent: 'guesser/10' });
  assert.is(await count(service, `audit_events WHERE account_id = $1 AND event = 'login.failed'`, [account.user.id]), 100);
  assert.is(await count(service, `audit_events WHERE account_id = $1 AND event = 'login.locked'`, [account.user.id]), 1);
  assert.is(await count(service, `audit_events WHERE account_id = $1 AND event = 'login.succeeded'`, [account.user.id]), 1);
});

locked.run();
