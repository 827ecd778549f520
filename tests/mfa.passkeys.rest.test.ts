import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, bearer, login, registerAndVerify, setCookieValue } from './helpers/auth.ts';
import { request, startTestApp, type HttpResult, type TestService } from './helpers/service.ts';
import { data, trpcOver } from './helpers/trpc-http.ts';
import { checkedForFaults } from './helpers/faults.ts';
import { createSoftAuthenticator } from './helpers/webauthn.ts';

// Passkeys over REST and tRPC, with a software authenticator that signs as a platform one does:
// each route answers over the wire, a sign-in sets its cookies, an id in the path that cannot
// be one is 400. The rules (what a forged, cloned or stale answer gets, step-up, the last
// passkey taking the recovery codes) are called in process in tests/mfa.passkeys.caller.test.ts.

type Context = { service: TestService };
const test = checkedForFaults(suite<Context>('passkeys over REST and tRPC'));

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const post = (service: TestService, path: string, headers: Record<string, string>, json?: unknown): Promise<HttpResult> =>
  request(service.url, 'POST', `${AUTH}/${path}`, { headers: { 'content-type': 'application/json', ...headers }, json });

async function signInOptions(service: TestService, body?: unknown) {
  const options = await post(service, 'login/passkey/options', {}, body);
  assert.is(options.status, 200, options.text);
  return options.body.options;
}

test('each route over REST: options and add by bearer, a sign-in with its cookies, the second step at /login/mfa, removal by the id in the path', async ({ service }) => {
  const account = await registerAndVerify(service, 'passkey.rest@example.com');
  const authenticator = createSoftAuthenticator(service.url);
  const options = await post(service, 'mfa/passkeys/options', bearer(account.token), { password: PASSWORD });
  assert.is(options.status, 200, options.text);
  assertError(await post(service, 'mfa/passkeys/options', {}, { password: PASSWORD }), 401, 'UNAUTHORIZED');
  const added = await post(service, 'mfa/passkeys', bearer(account.token), { name: 'Laptop', response: authenticator.register(options.body.options) });
  assert.is(added.status, 200, added.text);
  assert.is(added.body.recovery_codes.length, 10);

  const signedIn = await post(service, 'login/passkey', {}, { response: authenticator.authenticate(await signInOptions(service)) });
  assert.is(signedIn.status, 200, signedIn.text);
  assert.is(signedIn.body.user.email, account.email);
  assert.is(setCookieValue(signedIn, 'svc_token'), signedIn.body.token);

  const first = await login(service, account.email);
  assertError(first, 403, 'MFA_REQUIRED');
  const mfaToken = first.body.mfa_token;
  const second = await post(service, 'login/mfa', {}, { mfa_token: mfaToken, response: authenticator.authenticate(await signInOptions(service, { mfa_token: mfaToken })) });
  assert.is(second.status, 200, second.text);
  assert.is(setCookieValue(second, 'svc_token'), second.body.token);

  for (const id of ['not-a-uuid', '%00']) assertError(await post(service, `mfa/passkeys/${id}/remove`, bearer(signedIn.body.token), { password: PASSWORD }), 400, 'VALIDATION_FAILED');
  const proof = authenticator.authenticate(await signInOptions(service));
  const removed = await post(service, `mfa/passkeys/${added.body.passkey.id}/remove`, bearer(signedIn.body.token), { password: PASSWORD, response: proof });
  assert.is(removed.status, 200, removed.text);
  assert.is((await login(service, account.email)).status, 200, 'the password alone signs in again');
});

test('over tRPC: auth.passkeyOptions, auth.addPasskey, auth.passkeyLoginOptions, auth.loginPasskey', async ({ service }) => {
  const account = await registerAndVerify(service, 'passkey.trpc@example.com');
  const trpc = trpcOver(service);
  const authenticator = createSoftAuthenticator(service.url);
  const options = data(await trpc.mutation(account, 'auth.passkeyOptions', { password: PASSWORD })).options;
  const added = await trpc.mutation(account, 'auth.addPasskey', { response: authenticator.register(options) });
  assert.is(added.status, 200, added.text);
  assert.is(data(added).recovery_codes.length, 10);
  const loginOptions = data(await trpc.mutation(undefined, 'auth.passkeyLoginOptions')).options;
  const signedIn = await trpc.mutation(undefined, 'auth.loginPasskey', { response: authenticator.authenticate(loginOptions) });
  assert.is(signedIn.status, 200, signedIn.text);
  assert.is(data(signedIn).user.email, account.email);
  assert.ok(setCookieValue(signedIn, 'svc_token'));
  const status = data(await trpc.query({ token: data(signedIn).token }, 'auth.mfaStatus'));
  assert.is(status.passkeys.length, 1);
});

test.run();
