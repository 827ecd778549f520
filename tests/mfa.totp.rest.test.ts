import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { AUTH, PASSWORD, assertError, bearer, login, registerAndVerify, setCookieValue, type Account } from './helpers/auth.ts';
import { request, startTestApp, type HttpResult, type TestService } from './helpers/service.ts';
import { faultLines } from './helpers/faults.ts';
import { data, trpcOver } from './helpers/trpc-http.ts';

// What HTTP adds to the second factor: the cookies that come with a finished sign-in and
// none before, tRPC's error data, bodies no client sends, and the log. The procedures' rules
// (codes, recovery codes, the mfa_token, step-up) are tested in process:
// tests/mfa.totp.caller.test.ts.

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
