import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runHousekeeping } from '../server/src/roles/housekeeping.ts';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { failChallenge, insertChallenge, useChallenge } from '../server/src/modules/mfa/mfa.repo.ts';
import { sha256 } from '../server/src/lib/crypto.ts';
import { PASSWORD, assertError, bearer, nextMail, registerAndVerify, type Account } from './helpers/auth.ts';
import { answerOf, callerWith, loginCall as login, meCall as me, type Caller } from './helpers/caller.ts';
import { startTestApp, type HttpResult, type TestService } from './helpers/service.ts';

// The authenticator app (RFC 6238), recovery codes, the second step of a sign-in, and
// step-up before sensitive changes: the procedures' rules, called in process on the
// service's test clock. What HTTP adds (the cookies of a finished sign-in, tRPC's error data,
// bodies no client sends, the log) is tested over REST in tests/mfa.totp.rest.test.ts.

type Context = { service: TestService };
const test = suite<Context>('second factor: authenticator app, recovery codes, sign-in second step, step-up (procedures)');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const STEP_MS = 30_000;
const RECOVERY_CODE = /^[2-9a-hjkmnp-tw-z]{5}-[2-9a-hjkmnp-tw-z]{5}$/;

type Headers = { authorization?: string };
/** An auth.* procedure by name, with any input, as a client that ignores the types would call it. */
const call = (service: TestService, procedure: keyof Caller['auth'], headers: Headers, input?: unknown): Promise<HttpResult> =>
  answerOf((callerWith(service, headers).auth[procedure] as (input: unknown) => Promise<unknown>)(input));
const mfaStatus = async (service: TestService, account: { token: string }) => callerWith(service, bearer(account.token)).auth.mfaStatus();
const codeNow = (service: TestService, secret: string) => totpCodeAt(secret, service.clock.now());
/** The next 30 s step, so that a new code is not a replay of the last one. */
const nextStep = (service: TestService) => service.clock.advance(STEP_MS);

type WithTotp = Account & { secret: string; recoveryCodes: string[] };

/** A verified account with the authenticator app on. */
async function accountWithTotp(context: Context, email: string): Promise<WithTotp> {
  const { service } = context;
  const account = await registerAndVerify(service, email);
  const setup = await call(service, 'setupTotp', bearer(account.token), { password: PASSWORD });
  assert.is(setup.status, 200, setup.text);
  const enabled = await call(service, 'enableTotp', bearer(account.token), { code: codeNow(service, setup.body.secret) });
  assert.is(enabled.status, 200, enabled.text);
  nextStep(service);
  return { ...account, secret: setup.body.secret, recoveryCodes: enabled.body.recovery_codes };
}

/** Password accepted, second step asked for: the mfa_token. */
async function firstStep(context: Context, account: Account): Promise<string> {
  const answer = await login(context.service, account.email, account.password);
  assertError(answer, 403, 'MFA_REQUIRED');
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
  assertError(await call(service, 'setupTotp', bearer(account.token), { password: 'not the password' }), 401, 'INVALID_CREDENTIALS');
  const setup = await call(service, 'setupTotp', bearer(account.token), { password: PASSWORD });
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
  assertError(await call(service, 'enableTotp', bearer(account.token), { code: '123456' }), 400, 'INVALID_CODE');
  const setup = await call(service, 'setupTotp', bearer(account.token), { password: PASSWORD });
  const wrong = await call(service, 'enableTotp', bearer(account.token), { code: String((Number(codeNow(service, setup.body.secret)) + 1) % 1_000_000).padStart(6, '0') });
  assertError(wrong, 400, 'INVALID_CODE');
  assert.equal(wrong.body.issues.map((issue: { path: string }) => issue.path), ['code']);
  const seen = service.smtp.mailsTo(account.email).length;
  const enabled = await call(service, 'enableTotp', bearer(account.token), { code: codeNow(service, setup.body.secret) });
  assert.is(enabled.status, 200, enabled.text);
  assert.is(enabled.body.recovery_codes.length, 10);
  assert.is(new Set(enabled.body.recovery_codes).size, 10);
  for (const code of enabled.body.recovery_codes) assert.match(code, RECOVERY_CODE);
  const stored = await service.deps.db.query<{ code_hash: Buffer }>('SELECT code_hash FROM mfa_recovery_codes WHERE account_id = $1', [account.user.id]);
  assert.is(stored.length, 10);
  for (const { code_hash } of stored) assert.not.ok(enabled.body.recovery_codes.some((code: string) => code_hash.toString('utf8').includes(code)), 'stored hashed');
  assert.match((await nextMail(service, account.email, seen, /Two-factor authentication is on/)).subject, 'Two-factor');
  assert.equal(await mfaStatus(service, account), { success: true, totp: true, passkeys: [], recovery_codes_left: 10 });
  assertError(await call(service, 'enableTotp', bearer(account.token), { code: codeNow(service, setup.body.secret) }), 409, 'CONFLICT');
  const again = await call(service, 'setupTotp', bearer(account.token), { password: PASSWORD, code: codeNow(service, setup.body.secret) });
  assertError(again, 409, 'CONFLICT');
});


test('a code is accepted once: the same code in its window is refused; the next step is fine', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.replay@example.com');
  const code = codeNow(service, account.secret);
  assert.is((await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code })).status, 200);
  assertError(await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code }), 401, 'INVALID_CREDENTIALS');
  service.clock.advance(10_000);
  assertError(await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code }), 401, 'INVALID_CREDENTIALS');
  nextStep(service);
  assert.is((await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).status, 200);
  // One step either side is accepted (a phone a little off); two steps ago is not.
  nextStep(service);
  const old = totpCodeAt(account.secret, new Date(service.clock.now().getTime() - 2 * STEP_MS));
  assertError(await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code: old }), 401, 'INVALID_CREDENTIALS');
});


test('the mfa_token: single use, 5 minutes, and 5 wrong codes void it', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.token@example.com');
  const expiring = await firstStep(context, account);
  service.clock.advance(5 * 60_000 + 1_000);
  assertError(await call(service, 'loginMfa', {}, { mfa_token: expiring, code: codeNow(service, account.secret) }), 400, 'INVALID_TOKEN');

  const guessed = await firstStep(context, account);
  for (let i = 0; i < 5; i++) assertError(await call(service, 'loginMfa', {}, { mfa_token: guessed, code: '000000' }), 401, 'INVALID_CREDENTIALS');
  assertError(await call(service, 'loginMfa', {}, { mfa_token: guessed, code: codeNow(service, account.secret) }), 400, 'INVALID_TOKEN');
  assertError(await call(service, 'loginMfa', {}, { mfa_token: 'x'.repeat(43), code: codeNow(service, account.secret) }), 400, 'INVALID_TOKEN');
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
    assertError(await call(limited, 'loginMfa', {}, { mfa_token: token, code: '000000' }), 401, 'INVALID_CREDENTIALS');
    const [counted] = await limited.deps.db.query<{ hits: number }>('SELECT hits FROM rate_limits WHERE key = $1', [`login-failed:${account.email}`]);
    assert.is(counted.hits, 1, 'the wrong code counted against the account');
    // Run the account's failed-login count up to its cap, as a stranger's guesses would.
    for (let i = 1; i < 100; i++) await limited.deps.rateLimiter.hit([{ rule: { name: 'login-failed', limit: 100, windowSeconds: 3600 }, key: account.email }]);
    const capped = await call(limited, 'loginMfa', {}, { mfa_token: token, code: codeNow(limited, account.secret) });
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
  const second = await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code: typed });
  assert.is(second.status, 200, second.text);
  assert.match((await nextMail(service, account.email, seen, /recovery code was used/)).subject, 'A recovery code was used');
  assertError(await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code }), 401, 'INVALID_CREDENTIALS');
  assert.is((await mfaStatus(service, { token: second.body.token })).recovery_codes_left, 9);
  // As a step-up proof too.
  const changed = await call(service, 'rotateApiKey', bearer(second.body.token), { code: account.recoveryCodes[1] });
  assert.is(changed.status, 200, changed.text);
  assert.is((await mfaStatus(service, { token: second.body.token })).recovery_codes_left, 8);
});


test('step-up: a session changing password, e-mail, key or deleting needs a proof; one proof covers 5 minutes', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.stepup@example.com');
  const session = (await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).body.token;
  nextStep(service);
  const attempts: Array<[keyof Caller['auth'], Record<string, unknown>]> = [
    ['changePassword', { current_password: PASSWORD, new_password: 'a new and long password' }],
    ['changeEmail', { new_email: 'totp.stepup.new@example.com', password: PASSWORD }],
    ['rotateApiKey', {}],
    ['deleteAccount', { password: PASSWORD }],
    ['passkeyOptions', { password: PASSWORD }],
  ];
  for (const [procedure, body] of attempts) {
    const refused = await call(service, procedure, bearer(session), body);
    assertError(refused, 403, 'STEP_UP_REQUIRED');
    assert.equal(refused.body.methods, ['totp', 'recovery_code'], procedure);
  }
  const wrong = await call(service, 'rotateApiKey', bearer(session), { code: '000000' });
  assertError(wrong, 400, 'INVALID_CODE');
  assert.equal(wrong.body.issues, [{ path: 'code', message: 'is wrong, already used or expired' }]);
  assert.is((await me(service, bearer(account.apiKey))).body.user.api_key, account.apiKey, 'nothing rotated');

  const rotated = await call(service, 'rotateApiKey', bearer(session), { code: codeNow(service, account.secret) });
  assert.is(rotated.status, 200, rotated.text);
  service.clock.advance(4 * 60_000);
  assert.is((await call(service, 'rotateApiKey', bearer(session), {})).status, 200, 'stepped up for 5 minutes');
  service.clock.advance(61_000);
  assertError(await call(service, 'rotateApiKey', bearer(session), {}), 403, 'STEP_UP_REQUIRED');
  // Another session is not stepped up by this one's proof, and "sign out everywhere" never asks.
  const other = (await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).body.token;
  assertError(await call(service, 'rotateApiKey', bearer(other), {}), 403, 'STEP_UP_REQUIRED');
  assert.is((await call(service, 'revokeAllSessions', bearer(session), {})).status, 200);
});


test("step-up belongs to the session that proved it: another session of the account, inside that window, still needs its own proof", async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.two-sessions@example.com');
  const signIn = async () => (await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).body.token as string;
  const a = await signIn();
  nextStep(service);
  const b = await signIn();
  nextStep(service);
  assert.is((await call(service, 'rotateApiKey', bearer(a), { code: codeNow(service, account.secret) })).status, 200, 'A proves');
  // Seconds later, A's five minutes still running: B has proved nothing.
  for (const [procedure, body] of [['rotateApiKey', {}], ['changeEmail', { new_email: 'totp.two-sessions.new@example.com', password: PASSWORD }], ['changePassword', { current_password: PASSWORD, new_password: 'a new and long password' }]] as const) {
    assertError(await call(service, procedure, bearer(b), body), 403, 'STEP_UP_REQUIRED');
  }
  assert.is((await call(service, 'rotateApiKey', bearer(a), {})).status, 200, 'A is stepped up');
});


test('a password change ends the step-up: the session that changed it proves the factor again for its next change', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.stepup-ends@example.com');
  const session = (await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).body.token;
  nextStep(service);
  const changed = await call(service, 'changePassword', bearer(session), { current_password: PASSWORD, new_password: 'a new and long password', code: codeNow(service, account.secret) });
  assert.is(changed.status, 200, changed.text);
  assertError(await call(service, 'rotateApiKey', bearer(session), {}), 403, 'STEP_UP_REQUIRED');
  nextStep(service);
  assert.is((await call(service, 'rotateApiKey', bearer(session), { code: codeNow(service, account.secret) })).status, 200);
});


test('the API key is no way around the second factor: with one on, every change on the list needs the proof by key too, every time', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.apikey@example.com');
  const session = (await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).body.token;
  nextStep(service);
  // The review's path: refused by the session, the key read from /me tried instead.
  assertError(await call(service, 'rotateApiKey', bearer(session), {}), 403, 'STEP_UP_REQUIRED');
  const key = (await me(service, bearer(session))).body.user.api_key;
  const attempts: Array<[keyof Caller['auth'], Record<string, unknown>]> = [
    ['rotateApiKey', {}],
    ['changeEmail', { new_email: 'totp.apikey.new@example.com', password: PASSWORD }],
    ['changePassword', { current_password: PASSWORD, new_password: 'a new and long password' }],
    ['passkeyOptions', { password: PASSWORD }],
    ['setupTotp', { password: PASSWORD }],
    ['deleteAccount', { password: PASSWORD }],
  ];
  for (const [procedure, body] of attempts) {
    const refused = await call(service, procedure, bearer(key), body);
    if (procedure === 'setupTotp') assertError(refused, 409, 'CONFLICT');
    else assertError(refused, 403, 'STEP_UP_REQUIRED');
    if (procedure !== 'setupTotp') assert.equal(refused.body.methods, ['totp', 'recovery_code'], procedure);
  }
  assertError(await call(service, 'rotateApiKey', bearer(key), { code: '000000' }), 400, 'INVALID_CODE');
  assert.is((await me(service, bearer(key))).body.user.api_key, key, 'nothing rotated, no e-mail change asked');
  assert.is(service.smtp.mailsTo('totp.apikey.new@example.com').length, 0);
  const rotated = await call(service, 'rotateApiKey', bearer(key), { code: codeNow(service, account.secret) });
  assert.is(rotated.status, 200, rotated.text);
  // A key has no session to step up: the very next change asks again.
  assertError(await call(service, 'changePassword', bearer(rotated.body.api_key), { current_password: PASSWORD, new_password: 'a new and long password' }), 403, 'STEP_UP_REQUIRED');
  assertError(await call(service, 'changePassword', bearer(rotated.body.api_key), { current_password: 'wrong one', new_password: 'a new and long password' }), 401, 'INVALID_CREDENTIALS');
  nextStep(service);
  const changed = await call(service, 'changePassword', bearer(rotated.body.api_key), { current_password: PASSWORD, new_password: 'a new and long password', code: codeNow(service, account.secret) });
  assert.is(changed.status, 200, changed.text);
});


test('auth.stepUp proves the factor ahead of a change: the session needs no proof for 5 minutes; auth.stepUpStatus says where it stands', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.stepup-route@example.com');
  const session = (await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code: codeNow(service, account.secret) })).body.token;
  nextStep(service);
  const status = async (credential: string) => (await answerOf(callerWith(service, bearer(credential)).auth.stepUpStatus())).body;
  assert.equal(await status(session), { success: true, required: true, methods: ['totp', 'recovery_code'], stepped_up_until: null });
  assertError(await call(service, 'stepUp', bearer(session), {}), 400, 'VALIDATION_FAILED');
  assertError(await call(service, 'stepUp', bearer(session), { code: '000000' }), 400, 'INVALID_CODE');
  const proved = await call(service, 'stepUp', bearer(session), { code: codeNow(service, account.secret) });
  assert.is(proved.status, 200, proved.text);
  const until = new Date(service.clock.now().getTime() + 5 * 60_000).toISOString();
  assert.equal(proved.body, { success: true, required: true, methods: ['totp', 'recovery_code'], stepped_up_until: until });
  assert.is((await status(session)).stepped_up_until, until);
  assert.is((await call(service, 'rotateApiKey', bearer(session), {})).status, 200, 'no proof needed now');
  service.clock.advance(5 * 60_000 + 1000);
  assert.is((await status(session)).stepped_up_until, null);
  assertError(await call(service, 'rotateApiKey', bearer(session), {}), 403, 'STEP_UP_REQUIRED');
  // An API key has no session to step up; an account without a factor has nothing to prove.
  const key = (await me(service, bearer(session))).body.user.api_key;
  nextStep(service);
  assertError(await call(service, 'stepUp', bearer(key), { code: codeNow(service, account.secret) }), 403, 'FORBIDDEN');
  assert.is((await status(key)).stepped_up_until, null);
  const plain = await registerAndVerify(service, 'nofactor.stepup@example.com');
  assert.equal(await status(plain.token), { success: true, required: false, methods: [], stepped_up_until: null });
  assertError(await call(service, 'stepUp', bearer(plain.token), { code: '123456' }), 409, 'CONFLICT');
  for (const body of [{ code: '123456', response: {} }, { code: 5 }, { codes: '123456' }, { code: 'x'.repeat(100) }]) {
    assertError(await call(service, 'stepUp', bearer(session), body), 400, 'VALIDATION_FAILED');
  }
});


test('without a second factor the API key changes nothing: key rotation by key needs no proof', async (context) => {
  const { service } = context;
  const account = await registerAndVerify(service, 'nofactor.apikey@example.com');
  const rotated = await call(service, 'rotateApiKey', bearer(account.apiKey), {});
  assert.is(rotated.status, 200, rotated.text);
  assertError(await call(service, 'changePassword', bearer(rotated.body.api_key), { current_password: 'wrong one', new_password: 'a new and long password' }), 401, 'INVALID_CREDENTIALS');
  assert.is((await call(service, 'changePassword', bearer(rotated.body.api_key), { current_password: PASSWORD, new_password: 'a new and long password' })).status, 200);
});


test('disable needs the password and a code; the last factor takes the recovery codes with it', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.disable@example.com');
  const session = (await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code: account.recoveryCodes[0] })).body.token;
  assertError(await call(service, 'disableTotp', bearer(session), { password: 'wrong one', code: codeNow(service, account.secret) }), 401, 'INVALID_CREDENTIALS');
  assertError(await call(service, 'disableTotp', bearer(session), { password: PASSWORD, code: '000000' }), 400, 'INVALID_CODE');
  assertError(await call(service, 'disableTotp', bearer(session), { password: PASSWORD }), 400, 'VALIDATION_FAILED');
  const seen = service.smtp.mailsTo(account.email).length;
  assert.is((await call(service, 'disableTotp', bearer(session), { password: PASSWORD, code: codeNow(service, account.secret) })).status, 200);
  await nextMail(service, account.email, seen, /turned off/);
  assert.equal(await mfaStatus(service, { token: session }), { success: true, totp: false, passkeys: [], recovery_codes_left: 0 });
  assert.is((await login(service, account.email)).status, 200, 'sign-in needs the password alone again');
  assertError(await call(service, 'disableTotp', bearer(session), { password: PASSWORD, code: '123456' }), 409, 'CONFLICT');
});


test('new recovery codes need the password and a proof; the older ones stop working', async (context) => {
  const { service } = context;
  const account = await accountWithTotp(context, 'totp.regenerate@example.com');
  const unproven = await call(service, 'regenerateRecoveryCodes', bearer(account.token), { password: PASSWORD });
  assertError(unproven, 403, 'STEP_UP_REQUIRED');
  assert.equal(unproven.body.methods, ['totp', 'recovery_code']);
  assertError(await call(service, 'regenerateRecoveryCodes', bearer(account.token), { password: PASSWORD, code: '000000' }), 400, 'INVALID_CODE');
  const fresh = await call(service, 'regenerateRecoveryCodes', bearer(account.token), { password: PASSWORD, code: codeNow(service, account.secret) });
  assert.is(fresh.status, 200, fresh.text);
  assert.is(fresh.body.recovery_codes.length, 10);
  assertError(await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code: account.recoveryCodes[0] }), 401, 'INVALID_CREDENTIALS');
  assert.is((await call(service, 'loginMfa', {}, { mfa_token: await firstStep(context, account), code: fresh.body.recovery_codes[0] })).status, 200);
  const plain = await registerAndVerify(service, 'totp.nofactor@example.com');
  assertError(await call(service, 'regenerateRecoveryCodes', bearer(plain.token), { password: PASSWORD, code: '000000' }), 409, 'CONFLICT');
});


test('MFA_REQUIRED_ROLES=admin: an admin without a factor can only set one up, by any credential', async () => {
  const strict = await startTestApp({ MFA_REQUIRED_ROLES: 'admin' });
  try {
    const admin = await registerAndVerify(strict, 'roles.admin@example.com');
    await strict.deps.db.query(`UPDATE accounts SET role = 'admin' WHERE id = $1`, [admin.user.id]);
    const user = await registerAndVerify(strict, 'roles.user@example.com');
    for (const credential of [admin.token, admin.apiKey]) {
      const refused = await answerOf(callerWith(strict, bearer(credential)).admin.inboxStats());
      assertError(refused, 403, 'MFA_SETUP_REQUIRED');
      assertError(await call(strict, 'rotateApiKey', bearer(credential), {}), 403, 'MFA_SETUP_REQUIRED');
      assertError(await answerOf(callerWith(strict, bearer(credential)).sites.create({ name: 'Shop', paymentWebhookSecret: 'whsec_0123456789' })), 403, 'MFA_SETUP_REQUIRED');
      const caller = callerWith(strict, bearer(credential));
      for (const [open, call_] of [['me', caller.auth.me], ['mfaStatus', caller.auth.mfaStatus], ['listSessions', caller.auth.listSessions]] as const) {
        assert.is((await answerOf(call_())).status, 200, open);
      }
    }
    assertError(await answerOf(callerWith(strict, bearer(user.token)).admin.inboxStats()), 403, 'FORBIDDEN');
    assert.is((await call(strict, 'rotateApiKey', bearer(user.token), {})).status, 200, 'other roles are not held back');
    const setup = await call(strict, 'setupTotp', bearer(admin.token), { password: PASSWORD });
    assert.is(setup.status, 200, setup.text);
    assert.is((await call(strict, 'enableTotp', bearer(admin.token), { code: totpCodeAt(setup.body.secret, strict.clock.now()) })).status, 200);
    assert.is((await answerOf(callerWith(strict, bearer(admin.apiKey)).admin.inboxStats())).status, 200, 'with a factor, the admin may work');
    assert.is((await call(strict, 'logout', bearer(admin.token), {})).status, 200);
  } finally {
    await strict.close();
  }
});


test.run();
