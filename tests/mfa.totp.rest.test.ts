import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runHousekeeping } from '../server/src/roles/housekeeping.ts';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { failChallenge, insertChallenge, useChallenge } from '../server/src/modules/mfa/mfa.repo.ts';
import { sha256 } from '../server/src/lib/crypto.ts';
import { AUTH, PASSWORD, assertError, bearer, login, nextMail, registerAndVerify, setCookieValue, type Account } from './helpers/auth.ts';
import { request, startTestApp, type HttpResult, type TestService } from './helpers/service.ts';
import { faultLines } from './helpers/faults.ts';
import { data, trpcOver } from './helpers/trpc-http.ts';

// The authenticator app (RFC 6238), recovery codes, the second step of a sign-in, and
// step-up before sensitive changes, over REST and tRPC, on the service's test clock.

type Context = { service: TestService; secrets: Set<string> };
const test = suite<Context>('second factor: authenticator app, recovery codes, sign-in second step, step-up');

test.before(async (context) => {
  context.service = await startTestApp();
  context.secrets = new Set();
});
test.after(async ({ service }) => {
  await service?.close();
});

const STEP_MS = 30_000;
const RECOVERY_CODE = /^[2-9a-hjkmnp-tw-z]{5}-[2-9a-hjkmnp-tw-z]{5}$/;

const post = (service: TestService, path: string, headers: Record<string, string>, json?: unknown): Promise<HttpResult> =>
  request(service.url, 'POST', `${AUTH}/${path}`, { headers: { 'content-type': 'application/json', ...headers }, json });
const mfaStatus = async (service: TestService, account: { token: string }) => (await request(service.url, 'GET', `${AUTH}/mfa`, { headers: bearer(account.token) })).body;
const codeNow = (service: TestService, secret: string) => totpCodeAt(secret, service.clock.now());
/** The next 30 s step, so that a new code is not a replay of the last one. */
const nextStep = (service: TestService) => service.clock.advance(STEP_MS);

type WithTotp = Account & { secret: string; recoveryCodes: string[] };

/** A verified account with the authenticator app on; its secret and recovery codes kept for the log check. */
async function accountWithTotp(context: Context, email: string): Promise<WithTotp> {
  const { service, secrets } = context;
  const account = await registerAndVerify(service, email);
  const setup = await post(service, 'mfa/totp/setup', bearer(account.token), { password: PASSWORD });
  assert.is(setup.status, 200, setup.text);
  const enabled = await post(service, 'mfa/totp/enable', bearer(account.token), { code: codeNow(service, setup.body.secret) });
  assert.is(enabled.status, 200, enabled.text);
  secrets.add(setup.body.secret);
  for (const code of enabled.body.recovery_codes) secrets.add(code);
  nextStep(service);
  return { ...account, secret: setup.body.secret, recoveryCodes: enabled.body.recovery_codes };
}

/** Password accepted, second step asked for: the mfa_token. */
async function firstStep(context: Context, account: Account): Promise<string> {
  const answer = await login(context.service, account.email, account.password);
  assertError(answer, 403, 'MFA_REQUIRED');
  context.secrets.add(answer.body.mfa_token);
  return answer.body.mfa_token;
}

test('RFC 6238 test vectors (SHA-1): the app and the service agree on every code', () => {
  const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'; // "12345678901234567890", the RFC's key, in base32
  const vectors: Array<[number, string]> = [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ];
  for (const [seconds, code] of vectors) assert.is(totpCodeAt(secret, new Date(seconds * 1000), 8), code, `T=${seconds}`);
  // Six digits, as apps show them, are the last six of the same value.
  assert.is(totpCodeAt(secret, new Date(59_000)), '287082');
});

test('setup needs the password, gives a 20-byte base32 secret and its otpauth:// URL, and stores the secret sealed', async (context) => {
  const { service } = context;
  const account = await registerAndVerify(service, 'totp.setup@example.com');
  assertError(await post(service, 'mfa/totp/setup', bearer(account.token), { password: 'not the password' }), 401, 'INVALID_CREDENTIALS');
  const setup = await post(service, 'mfa/totp/setup', bearer(account.token), { password: PASSWORD });
  assert.is(setup.status, 200, setup.text);
  assert.match(setup.body.secret, /^[A-Z2-7]{32}$/);
  const url = new URL(setup.body.otpauth_url);
  assert.is(url.protocol, 'otpauth:');
  assert.is(url.host, 'totp');
  assert.is(decodeURIComponent(url.pathname), `/Gatehouse:${account.email}`);
  assert.equal(Object.fromEntries(url.searchParams), { issuer: 'Gatehouse', secret: setup.body.secret, algorithm: 'SHA1', digits: '6', period: '30' });
  const [row] = await service.deps.db.query<{ secret_sealed: string; enabled_at: Date | null }>('SELECT secret_sealed, enabled_at FROM mfa_totp WHERE account_id = $1', [account.user.id]);
  assert.is(row.enabled_at, null, 'waiting for its first code');
  assert.not.match(row.secret_sealed, setup.body.secret);
  assert.is((await mfaStatus(service, account)).totp, false, 'not on until a code is given');
  assert.is((await login(service, account.email)).status, 200, 'a pending setup does not change sign-in');
});

test('enable: a wrong code is 400 INVALID_CODE; the right one turns it on with ten recovery codes; again is 409', async (context) => {
  const { service } = context;
  const account = await registerAndVerify(service, 'totp.enable@example.com');
  assertError(await post(service, 'mfa/totp/enable', bearer(account.token), { code: '123456' }), 400, 'INVALID_CODE');
  const setup = await post(service, 'mfa/totp/setup', bearer(account.token), { password: PASSWORD });
  const wrong = await post(service, 'mfa/totp/enable', bearer(account.token), { code: String((Number(codeNow(service, setup.body.secret)) + 1) % 1_000_000).padStart(6, '0') });
  assertError(wrong, 400, 'INVALID_CODE');
  assert.equal(wrong.body.issues.map((issue: { path: string }) => issue.path), ['code']);
  const seen = service.smtp.mailsTo(account.email).length;
  const enabled = await post(service, 'mfa/totp/enable', bearer(account.token), { code: codeNow(service, setup.body.secret) });
  assert.is(enabled.status, 200, enabled.text);
  assert.is(enabled.body.recovery_codes.length, 10);
  assert.is(new Set(enabled.body.recovery_codes).size, 10);
  for (const code of enabled.body.recovery_codes) assert.match(code, RECOVERY_CODE);
  const stored = await service.deps.db.query<{ code_hash: Buffer }>('SELECT code_hash FROM mfa_recovery_codes WHERE account_id = $1', [account.user.id]);
  assert.is(stored.length, 10);
  for (const { code_hash } of stored) assert.not.ok(enabled.body.recovery_codes.some((code: string) => code_hash.toString('utf8').includes(code)), 'stored hashed');
  assert.match((await nextMail(service, account.email, seen, /Two-factor authentication is on/)).subject, 'Two-factor');
  assert.equal(await mfaStatus(service, account), { success: true, totp: true, passkeys: [], recovery_codes_left: 10 });
  assertError(await post(service, 'mfa/totp/enable', bearer(account.token), { code: codeNow(service, setup.body.secret) }), 409, 'CONFLICT');
  const again = await post(service, 'mfa/totp/setup', bearer(account.token), { password: PASSWORD, code: codeNow(service, setup.body.secret) });
  assertError(again, 409, 'CONFLICT');
});

test('sign-in: the password gives 403 MFA_REQUIRED with an mfa_token and methods, no cookie; /login/mfa with the code signs in', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.login@example.com');
  const first = await login(service, account.email, account.password);
  assertError(first, 403, 'MFA_REQUIRED');
  assert.equal(first.body.methods, ['totp', 'recovery_code']);
  // It names the ways this account has, and no passkey it does not have.
  assert.is(first.body.message, 'The password is right; now give the code from your authenticator app or a recovery code.');
  assert.match(first.body.mfa_token, /^[\w-]{43}$/);
  assert.equal(first.headers.getSetCookie(), [], 'no session or device cookie before the second step');
  assertError(await login(service, account.email, 'a wrong password'), 401, 'INVALID_CREDENTIALS');
  assertError(await login(service, 'nobody.at.all@example.com', 'a wrong password'), 401, 'INVALID_CREDENTIALS');

  const second = await post(service, 'login/mfa', {}, { mfa_token: first.body.mfa_token, code: codeNow(service, account.secret) });
  assert.is(second.status, 200, second.text);
  assert.is(second.body.user.email, account.email);
  assert.ok(setCookieValue(second, 'svc_token'), 'the session cookie comes with the second step');
  assert.ok(setCookieValue(second, 'svc_device'), 'and the device cookie');
  assert.is((await request(service.url, 'GET', `${AUTH}/me`, { headers: bearer(second.body.token) })).status, 200);
  assertError(await post(service, 'login/mfa', {}, { mfa_token: first.body.mfa_token, code: codeNow(service, account.secret) }), 400, 'INVALID_TOKEN');
  const activity = await request(service.url, 'GET', `${AUTH}/activity`, { headers: bearer(second.body.token) });
  const events = activity.body.items.map((item: { event: string }) => item.event).filter((event: string) => event.startsWith('login.'));
  assert.equal(events.slice(0, 3), ['login.succeeded', 'login.failed', 'login.mfa_required'], 'newest first: the second step, the wrong password, the first step');
});

test('a code is accepted once: the same code in its window is refused; the next step is fine', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.replay@example.com');
  const code = codeNow(service, account.secret);
  assert.is((await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code })).status, 200);
  assertError(await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code }), 401, 'INVALID_CREDENTIALS');
  service.clock.advance(10_000);
  assertError(await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code }), 401, 'INVALID_CREDENTIALS');
  nextStep(service);
  assert.is((await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).status, 200);
  // One step either side is accepted (a phone a little off); two steps ago is not.
  nextStep(service);
  const old = totpCodeAt(account.secret, new Date(service.clock.now().getTime() - 2 * STEP_MS));
  assertError(await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code: old }), 401, 'INVALID_CREDENTIALS');
});

test('the mfa_token: single use, 5 minutes, and 5 wrong codes void it', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.token@example.com');
  const expiring = await firstStep(context, account);
  service.clock.advance(5 * 60_000 + 1_000);
  assertError(await post(service, 'login/mfa', {}, { mfa_token: expiring, code: codeNow(service, account.secret) }), 400, 'INVALID_TOKEN');

  const guessed = await firstStep(context, account);
  for (let i = 0; i < 5; i++) assertError(await post(service, 'login/mfa', {}, { mfa_token: guessed, code: '000000' }), 401, 'INVALID_CREDENTIALS');
  assertError(await post(service, 'login/mfa', {}, { mfa_token: guessed, code: codeNow(service, account.secret) }), 400, 'INVALID_TOKEN');
  assertError(await post(service, 'login/mfa', {}, { mfa_token: 'x'.repeat(43), code: codeNow(service, account.secret) }), 400, 'INVALID_TOKEN');
  const [row] = await service.deps.db.query<{ n: number }>("SELECT count(*)::int AS n FROM mfa_challenges WHERE kind = 'mfa_token' AND account_id = $1", [account.user.id]);
  assert.ok(row.n >= 2, 'tokens are stored (as hashes)');
  const stored = await service.deps.db.query<{ token_hash: Buffer }>('SELECT token_hash FROM mfa_challenges WHERE account_id = $1', [account.user.id]);
  assert.ok(stored.every(({ token_hash }) => token_hash.length === 32 && !token_hash.toString('utf8').includes(guessed)));
  // The worker's housekeeping drops them once they ran out.
  service.clock.advance(5 * 60_000 + 1_000);
  const report = await runHousekeeping(service.deps);
  assert.ok(report.mfaChallenges >= 2, `${report.mfaChallenges} purged`);
  assert.equal(await service.deps.db.query('SELECT 1 FROM mfa_challenges WHERE account_id = $1', [account.user.id]), []);
});

test('a token is used only while live: proofs checked at once cannot outlast its five failures or its expiry', async (context) => {
  // The second step reads its token once, then checks the proof; the use itself asks again
  // whether the token is live, so wrong codes counted meanwhile (or the clock) still bite.
  const { service } = context;
  const { db } = service.deps;
  const account = await registerAndVerify(service, 'totp.use-live@example.com');
  const make = (token: string) => insertChallenge(db, service.clock, 'mfa_token', sha256(token), account.user.id, 5 * 60_000);
  const idOf = async (token: string) => (await db.query<{ id: string }>('SELECT id FROM mfa_challenges WHERE token_hash = $1', [sha256(token)]))[0].id;
  const limits = { maxFailures: 5 };

  await make('token-guessed');
  const guessed = await idOf('token-guessed');
  for (let i = 0; i < 4; i++) await failChallenge(db, guessed);
  assert.is(await failChallenge(db, guessed), 5);
  assert.is(await useChallenge(db, service.clock, guessed, limits), false, 'five failures void it');

  await make('token-expired');
  const expired = await idOf('token-expired');
  service.clock.advance(5 * 60_000 + 1);
  assert.is(await useChallenge(db, service.clock, expired, limits), false, 'past its five minutes');

  await make('token-right');
  const right = await idOf('token-right');
  for (let i = 0; i < 4; i++) await failChallenge(db, right);
  assert.is(await useChallenge(db, service.clock, right, limits), true, 'four failures leave one try');
  assert.is(await useChallenge(db, service.clock, right, limits), false, 'used once');
});

test('wrong codes count as failed logins of the account: at the cap even the right code is refused', async (context) => {
  const limited = await startTestApp({ RATE_LIMITS: 'on' });
  try {
    const account = await accountWithTotp({ ...context, service: limited }, 'totp.cap@example.com');
    const token = await firstStep({ ...context, service: limited }, account);
    assertError(await post(limited, 'login/mfa', {}, { mfa_token: token, code: '000000' }), 401, 'INVALID_CREDENTIALS');
    const [counted] = await limited.deps.db.query<{ hits: number }>('SELECT hits FROM rate_limits WHERE key = $1', [`login-failed:${account.email}`]);
    assert.is(counted.hits, 1, 'the wrong code counted against the account');
    // Run the account's failed-login count up to its cap, as a stranger's guesses would.
    for (let i = 1; i < 100; i++) await limited.deps.rateLimiter.hit([{ rule: { name: 'login-failed', limit: 100, windowSeconds: 3600 }, key: account.email }]);
    const capped = await post(limited, 'login/mfa', {}, { mfa_token: token, code: codeNow(limited, account.secret) });
    assertError(capped, 429, 'RATE_LIMITED');
    assert.ok(Number(capped.headers.get('retry-after')) > 0);
  } finally {
    await limited.close();
  }
});

test('recovery codes: accepted wherever a code is, once each; using one mails a notice', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.recovery@example.com');
  const [code] = account.recoveryCodes;
  const seen = service.smtp.mailsTo(account.email).length;
  const typed = ` ${code.toUpperCase().replace('-', ' ')} `;
  const second = await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code: typed });
  assert.is(second.status, 200, second.text);
  assert.match((await nextMail(service, account.email, seen, /recovery code was used/)).subject, 'A recovery code was used');
  assertError(await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code }), 401, 'INVALID_CREDENTIALS');
  assert.is((await mfaStatus(service, { token: second.body.token })).recovery_codes_left, 9);
  // As a step-up proof too.
  const changed = await post(service, 'api-key/rotate', bearer(second.body.token), { code: account.recoveryCodes[1] });
  assert.is(changed.status, 200, changed.text);
  assert.is((await mfaStatus(service, { token: second.body.token })).recovery_codes_left, 8);
});

test('step-up: a session changing password, e-mail, key or deleting needs a proof; one proof covers 5 minutes', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.stepup@example.com');
  const session = (await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).body.token;
  nextStep(service);
  const attempts: Array<[string, Record<string, unknown>]> = [
    ['password/change', { current_password: PASSWORD, new_password: 'a new and long password' }],
    ['email/change', { new_email: 'totp.stepup.new@example.com', password: PASSWORD }],
    ['api-key/rotate', {}],
    ['account/delete', { password: PASSWORD }],
    ['mfa/passkeys/options', { password: PASSWORD }],
  ];
  for (const [path, body] of attempts) {
    const refused = await post(service, path, bearer(session), body);
    assertError(refused, 403, 'STEP_UP_REQUIRED');
    assert.equal(refused.body.methods, ['totp', 'recovery_code'], path);
  }
  const wrong = await post(service, 'api-key/rotate', bearer(session), { code: '000000' });
  assertError(wrong, 400, 'INVALID_CODE');
  assert.equal(wrong.body.issues, [{ path: 'code', message: 'is wrong, already used or expired' }]);
  assert.is((await request(service.url, 'GET', `${AUTH}/me`, { headers: bearer(account.apiKey) })).body.user.api_key, account.apiKey, 'nothing rotated');

  const rotated = await post(service, 'api-key/rotate', bearer(session), { code: codeNow(service, account.secret) });
  assert.is(rotated.status, 200, rotated.text);
  service.clock.advance(4 * 60_000);
  assert.is((await post(service, 'api-key/rotate', bearer(session), {})).status, 200, 'stepped up for 5 minutes');
  service.clock.advance(61_000);
  assertError(await post(service, 'api-key/rotate', bearer(session), {}), 403, 'STEP_UP_REQUIRED');
  // Another session is not stepped up by this one's proof, and "sign out everywhere" never asks.
  const other = (await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).body.token;
  assertError(await post(service, 'api-key/rotate', bearer(other), {}), 403, 'STEP_UP_REQUIRED');
  assert.is((await post(service, 'sessions/revoke-all', bearer(session), {})).status, 200);
});

test("step-up belongs to the session that proved it: another session of the account, inside that window, still needs its own proof", async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.two-sessions@example.com');
  const signIn = async () => (await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).body.token as string;
  const a = await signIn();
  nextStep(service);
  const b = await signIn();
  nextStep(service);
  assert.is((await post(service, 'api-key/rotate', bearer(a), { code: codeNow(service, account.secret) })).status, 200, 'A proves');
  // Seconds later, A's five minutes still running: B has proved nothing.
  for (const [path, body] of [['api-key/rotate', {}], ['email/change', { new_email: 'totp.two-sessions.new@example.com', password: PASSWORD }], ['password/change', { current_password: PASSWORD, new_password: 'a new and long password' }]] as const) {
    assertError(await post(service, path, bearer(b), body), 403, 'STEP_UP_REQUIRED');
  }
  assert.is((await post(service, 'api-key/rotate', bearer(a), {})).status, 200, 'A is stepped up');
});

test('a password change ends the step-up: the session that changed it proves the factor again for its next change', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.stepup-ends@example.com');
  const session = (await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).body.token;
  nextStep(service);
  const changed = await post(service, 'password/change', bearer(session), { current_password: PASSWORD, new_password: 'a new and long password', code: codeNow(service, account.secret) });
  assert.is(changed.status, 200, changed.text);
  assertError(await post(service, 'api-key/rotate', bearer(session), {}), 403, 'STEP_UP_REQUIRED');
  nextStep(service);
  assert.is((await post(service, 'api-key/rotate', bearer(session), { code: codeNow(service, account.secret) })).status, 200);
});

test('the API key is no way around the second factor: with one on, every change on the list needs the proof by key too, every time', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.apikey@example.com');
  const session = (await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).body.token;
  nextStep(service);
  // The review's path: refused by the session, the key read from /me tried instead.
  assertError(await post(service, 'api-key/rotate', bearer(session), {}), 403, 'STEP_UP_REQUIRED');
  const key = (await request(service.url, 'GET', `${AUTH}/me`, { headers: bearer(session) })).body.user.api_key;
  const attempts: Array<[string, Record<string, unknown>]> = [
    ['api-key/rotate', {}],
    ['email/change', { new_email: 'totp.apikey.new@example.com', password: PASSWORD }],
    ['password/change', { current_password: PASSWORD, new_password: 'a new and long password' }],
    ['mfa/passkeys/options', { password: PASSWORD }],
    ['mfa/totp/setup', { password: PASSWORD }],
    ['account/delete', { password: PASSWORD }],
  ];
  for (const [path, body] of attempts) {
    const refused = await post(service, path, bearer(key), body);
    if (path === 'mfa/totp/setup') assertError(refused, 409, 'CONFLICT');
    else assertError(refused, 403, 'STEP_UP_REQUIRED');
    if (path !== 'mfa/totp/setup') assert.equal(refused.body.methods, ['totp', 'recovery_code'], path);
  }
  assertError(await post(service, 'api-key/rotate', bearer(key), { code: '000000' }), 400, 'INVALID_CODE');
  assert.is((await request(service.url, 'GET', `${AUTH}/me`, { headers: bearer(key) })).body.user.api_key, key, 'nothing rotated, no e-mail change asked');
  assert.is(service.smtp.mailsTo('totp.apikey.new@example.com').length, 0);
  const rotated = await post(service, 'api-key/rotate', bearer(key), { code: codeNow(service, account.secret) });
  assert.is(rotated.status, 200, rotated.text);
  // A key has no session to step up: the very next change asks again.
  assertError(await post(service, 'password/change', bearer(rotated.body.api_key), { current_password: PASSWORD, new_password: 'a new and long password' }), 403, 'STEP_UP_REQUIRED');
  assertError(await post(service, 'password/change', bearer(rotated.body.api_key), { current_password: 'wrong one', new_password: 'a new and long password' }), 401, 'INVALID_CREDENTIALS');
  nextStep(service);
  const changed = await post(service, 'password/change', bearer(rotated.body.api_key), { current_password: PASSWORD, new_password: 'a new and long password', code: codeNow(service, account.secret) });
  assert.is(changed.status, 200, changed.text);
});

test('POST /step-up proves the factor ahead of a change: the session needs no proof for 5 minutes; GET /step-up says where it stands', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.stepup-route@example.com');
  const session = (await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).body.token;
  nextStep(service);
  const status = async (credential: string) => (await request(service.url, 'GET', `${AUTH}/step-up`, { headers: bearer(credential) })).body;
  assert.equal(await status(session), { success: true, required: true, methods: ['totp', 'recovery_code'], stepped_up_until: null });
  assertError(await post(service, 'step-up', bearer(session), {}), 400, 'VALIDATION_FAILED');
  assertError(await post(service, 'step-up', bearer(session), { code: '000000' }), 400, 'INVALID_CODE');
  const proved = await post(service, 'step-up', bearer(session), { code: codeNow(service, account.secret) });
  assert.is(proved.status, 200, proved.text);
  const until = new Date(service.clock.now().getTime() + 5 * 60_000).toISOString();
  assert.equal(proved.body, { success: true, required: true, methods: ['totp', 'recovery_code'], stepped_up_until: until });
  assert.is((await status(session)).stepped_up_until, until);
  assert.is((await post(service, 'api-key/rotate', bearer(session), {})).status, 200, 'no proof needed now');
  service.clock.advance(5 * 60_000 + 1000);
  assert.is((await status(session)).stepped_up_until, null);
  assertError(await post(service, 'api-key/rotate', bearer(session), {}), 403, 'STEP_UP_REQUIRED');
  // An API key has no session to step up; an account without a factor has nothing to prove.
  const key = (await request(service.url, 'GET', `${AUTH}/me`, { headers: bearer(session) })).body.user.api_key;
  nextStep(service);
  assertError(await post(service, 'step-up', bearer(key), { code: codeNow(service, account.secret) }), 403, 'FORBIDDEN');
  assert.is((await status(key)).stepped_up_until, null);
  const plain = await registerAndVerify(service, 'nofactor.stepup@example.com');
  assert.equal(await status(plain.token), { success: true, required: false, methods: [], stepped_up_until: null });
  assertError(await post(service, 'step-up', bearer(plain.token), { code: '123456' }), 409, 'CONFLICT');
  for (const body of [{ code: '123456', response: {} }, { code: 5 }, { codes: '123456' }, { code: 'x'.repeat(100) }]) {
    assertError(await post(service, 'step-up', bearer(session), body), 400, 'VALIDATION_FAILED');
  }
});

test('without a second factor the API key changes nothing: key rotation by key needs no proof', async (context) => {
  const { service } = context;
  const account = await registerAndVerify(service, 'nofactor.apikey@example.com');
  const rotated = await post(service, 'api-key/rotate', bearer(account.apiKey), {});
  assert.is(rotated.status, 200, rotated.text);
  assertError(await post(service, 'password/change', bearer(rotated.body.api_key), { current_password: 'wrong one', new_password: 'a new and long password' }), 401, 'INVALID_CREDENTIALS');
  assert.is((await post(service, 'password/change', bearer(rotated.body.api_key), { current_password: PASSWORD, new_password: 'a new and long password' })).status, 200);
});

test('disable needs the password and a code; the last factor takes the recovery codes with it', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.disable@example.com');
  const session = (await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code: account.recoveryCodes[0] })).body.token;
  assertError(await post(service, 'mfa/totp/disable', bearer(session), { password: 'wrong one', code: codeNow(service, account.secret) }), 401, 'INVALID_CREDENTIALS');
  assertError(await post(service, 'mfa/totp/disable', bearer(session), { password: PASSWORD, code: '000000' }), 400, 'INVALID_CODE');
  assertError(await post(service, 'mfa/totp/disable', bearer(session), { password: PASSWORD }), 400, 'VALIDATION_FAILED');
  const seen = service.smtp.mailsTo(account.email).length;
  assert.is((await post(service, 'mfa/totp/disable', bearer(session), { password: PASSWORD, code: codeNow(service, account.secret) })).status, 200);
  await nextMail(service, account.email, seen, /turned off/);
  assert.equal(await mfaStatus(service, { token: session }), { success: true, totp: false, passkeys: [], recovery_codes_left: 0 });
  assert.is((await login(service, account.email)).status, 200, 'sign-in needs the password alone again');
  assertError(await post(service, 'mfa/totp/disable', bearer(session), { password: PASSWORD, code: '123456' }), 409, 'CONFLICT');
});

test('new recovery codes need the password and a proof; the older ones stop working', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.regenerate@example.com');
  const unproven = await post(service, 'mfa/recovery-codes', bearer(account.token), { password: PASSWORD });
  assertError(unproven, 403, 'STEP_UP_REQUIRED');
  assert.equal(unproven.body.methods, ['totp', 'recovery_code']);
  assertError(await post(service, 'mfa/recovery-codes', bearer(account.token), { password: PASSWORD, code: '000000' }), 400, 'INVALID_CODE');
  const fresh = await post(service, 'mfa/recovery-codes', bearer(account.token), { password: PASSWORD, code: codeNow(service, account.secret) });
  assert.is(fresh.status, 200, fresh.text);
  assert.is(fresh.body.recovery_codes.length, 10);
  for (const code of fresh.body.recovery_codes) context.secrets.add(code);
  assertError(await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code: account.recoveryCodes[0] }), 401, 'INVALID_CREDENTIALS');
  assert.is((await post(service, 'login/mfa', {}, { mfa_token: await firstStep(context, account), code: fresh.body.recovery_codes[0] })).status, 200);
  const plain = await registerAndVerify(service, 'totp.nofactor@example.com');
  assertError(await post(service, 'mfa/recovery-codes', bearer(plain.token), { password: PASSWORD, code: '000000' }), 409, 'CONFLICT');
});

test('over tRPC: MFA_REQUIRED carries mfa_token and methods in the error data; auth.loginMfa finishes', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.trpc@example.com');
  const trpc = trpcOver(service);
  const first = await trpc.mutation(undefined, 'auth.login', { email: account.email, password: PASSWORD });
  assert.is(first.status, 403);
  const { appCode, mfa_token: mfaToken, methods } = first.body.error.data;
  assert.is(appCode, 'MFA_REQUIRED');
  assert.equal(methods, ['totp', 'recovery_code']);
  assert.equal(first.headers.getSetCookie(), []);
  const second = await trpc.mutation(undefined, 'auth.loginMfa', { mfa_token: mfaToken, code: codeNow(service, account.secret) });
  assert.is(second.status, 200, second.text);
  assert.ok(setCookieValue(second, 'svc_token'));
  const status = data(await trpc.query({ token: data(second).token }, 'auth.mfaStatus'));
  assert.is(status.totp, true);
  const stepUp = await trpc.mutation({ token: data(second).token }, 'auth.rotateApiKey', {});
  assert.is(stepUp.body.error.data.appCode, 'STEP_UP_REQUIRED');
  assert.equal(stepUp.body.error.data.methods, ['totp', 'recovery_code']);
});

test('MFA_REQUIRED_ROLES=admin: an admin without a factor can only set one up, by any credential', async () => {
  const strict = await startTestApp({ MFA_REQUIRED_ROLES: 'admin' });
  try {
    const admin = await registerAndVerify(strict, 'roles.admin@example.com');
    await strict.deps.db.query(`UPDATE accounts SET role = 'admin' WHERE id = $1`, [admin.user.id]);
    const user = await registerAndVerify(strict, 'roles.user@example.com');
    const trpc = trpcOver(strict);
    for (const credential of [admin.token, admin.apiKey]) {
      const refused = await request(strict.url, 'GET', '/api/v1/admin/inbox/stats', { headers: bearer(credential) });
      assertError(refused, 403, 'MFA_SETUP_REQUIRED');
      assertError(await post(strict, 'api-key/rotate', bearer(credential), {}), 403, 'MFA_SETUP_REQUIRED');
      assert.is((await trpc.mutation({ token: credential }, 'sites.create', { name: 'Shop', paymentWebhookSecret: 'whsec_0123456789' })).body.error.data.appCode, 'MFA_SETUP_REQUIRED');
      for (const open of ['me', 'mfa', 'sessions']) assert.is((await request(strict.url, 'GET', `${AUTH}/${open}`, { headers: bearer(credential) })).status, 200, open);
    }
    assert.is((await request(strict.url, 'GET', '/api/v1/admin/inbox/stats', { headers: bearer(user.token) })).status, 403, 'a plain user is not an admin');
    assert.is((await post(strict, 'api-key/rotate', bearer(user.token), {})).status, 200, 'other roles are not held back');
    const setup = await post(strict, 'mfa/totp/setup', bearer(admin.token), { password: PASSWORD });
    assert.is(setup.status, 200, setup.text);
    assert.is((await post(strict, 'mfa/totp/enable', bearer(admin.token), { code: totpCodeAt(setup.body.secret, strict.clock.now()) })).status, 200);
    assert.is((await request(strict.url, 'GET', '/api/v1/admin/inbox/stats', { headers: bearer(admin.apiKey) })).status, 200, 'with a factor, the admin may work');
    assert.is((await post(strict, 'logout', bearer(admin.token), {})).status, 200);
  } finally {
    await strict.close();
  }
});

test('garbage to every second-factor route is a 4xx and changes nothing', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.garbage@example.com');
  const before = await mfaStatus(service, account);
  const cases: Array<[string, unknown]> = [
    ['mfa/totp/setup', { password: PASSWORD, stray: 1 }],
    ['mfa/totp/setup', { password: 12345678 }],
    ['mfa/totp/enable', { code: 123456 }],
    ['mfa/totp/enable', { code: '' }],
    ['mfa/totp/disable', { password: PASSWORD, code: 'x'.repeat(100) }],
    ['mfa/recovery-codes', { password: PASSWORD, code: null }],
    ['mfa/passkeys', { response: { id: 'abc' } }],
    ['mfa/passkeys', { response: 'not an object' }],
    ['mfa/passkeys/options', { password: PASSWORD, response: { id: '!!', type: 'public-key' } }],
    ['login/mfa', { mfa_token: 'abc' }],
    ['login/mfa', { mfa_token: 'abc', code: '123456', response: { id: 'x' } }],
    ['login/mfa', { code: '123456' }],
    ['login/passkey', {}],
    ['login/passkey', { response: { id: 'a', rawId: 'a', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' } } }],
    ['login/passkey/options', { mfa_token: 'unknown' }],
    ['login/passkey/options', { stray: true }],
  ];
  for (const [path, body] of cases) {
    const answer = await post(service, path, bearer(account.token), body);
    assert.ok(answer.status >= 400 && answer.status < 500, `${path} ${JSON.stringify(body)}: ${answer.status} ${answer.text}`);
    assert.is(answer.body.success, false);
  }
  assertError(await request(service.url, 'POST', `${AUTH}/mfa/passkeys/00000000-0000-4000-8000-000000000000/remove`, { headers: { ...bearer(account.token), 'content-type': 'application/json' }, body: '{"password":' }), 400, 'INVALID_JSON');
  assert.equal(await mfaStatus(service, account), before);
});

test('no secret of this suite reached the log: TOTP secrets, recovery codes, mfa tokens', async (context) => {
  const { service, secrets } = context;
  // Its own sign-in with a second step, besides whatever the other tests kept.
  await firstStep(context, await accountWithTotp(context, 'log.check@example.com'));
  assert.ok(secrets.size >= 12, `${secrets.size} secrets`);
  const text = service.logs.text();
  for (const secret of secrets) assert.not.ok(text.includes(secret), `the log holds ${secret.slice(0, 6)}…`);
  assert.equal(faultLines(service.logs.lines), []);
});

test.run();
