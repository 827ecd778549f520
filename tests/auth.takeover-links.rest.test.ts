import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, bearer, registerAndVerify, type Account } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { intruderAsksForChange } from './helpers/accounts.ts';
import { data, trpcOver } from './helpers/trpc-http.ts';

// A password phished, an e-mail change asked for with it, the owner taking the account back, over
// tRPC and REST: what the transports add to the rules called in process in
// tests/auth.takeover-links.caller.test.ts (credentials, bodies no client sends, a cookie from
// another site).

const test = suite<{ service: TestService }>('REST and tRPC: a pending e-mail change, voided, shown and cancelled over the wire');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const NEW_PASSWORD = 'a brand new password, long';

const post = (service: TestService, path: string, headers: Record<string, string>, json?: unknown) =>
  request(service.url, 'POST', `${AUTH}/${path}`, { headers: { 'content-type': 'application/json', ...headers }, json });
const pending = async (service: TestService, account: Account) => {
  const result = await request(service.url, 'GET', `${AUTH}/email/pending`, { headers: bearer(account.token) });
  assert.is(result.status, 200, result.text);
  return result.body.pending;
};
test('over tRPC as well: auth.changePassword voids the pending change', async ({ service }) => {
  const owner = await registerAndVerify(service, 'trpc.owner@example.com');
  const changeToken = await intruderAsksForChange(service, owner, 'intruder.four@example.net');
  const changed = await trpcOver(service).mutation(owner, 'auth.changePassword', { current_password: PASSWORD, new_password: NEW_PASSWORD });
  assert.is(changed.status, 200, changed.text);
  assertError(await post(service, 'email/confirm', {}, { token: changeToken }), 400, 'INVALID_TOKEN');
});

test('auth.cancelEmailChange and auth.pendingEmailChange over tRPC, and the API key may cancel', async ({ service }) => {
  const owner = await registerAndVerify(service, 'trpc.cancel@example.com');
  const trpc = trpcOver(service);
  const changeToken = await intruderAsksForChange(service, owner, 'intruder.six@example.net');
  assert.is(data(await trpc.query(owner, 'auth.pendingEmailChange')).pending.new_email, 'intruder.six@example.net');
  const cancelled = await trpc.mutation(owner, 'auth.cancelEmailChange');
  assert.is(cancelled.status, 200, cancelled.text);
  assert.is(data(await trpc.query(owner, 'auth.pendingEmailChange')).pending, null);
  assertError(await post(service, 'email/confirm', {}, { token: changeToken }), 400, 'INVALID_TOKEN');

  await intruderAsksForChange(service, owner, 'intruder.seven@example.net');
  assert.is((await post(service, 'email/cancel', bearer(owner.apiKey))).status, 200);
  assert.is(await pending(service, owner), null);
});

test('garbage to /email/cancel and /email/pending is a 4xx and the pending change survives it', async ({ service }) => {
  const owner = await registerAndVerify(service, 'garbage.cancel@example.com');
  const changeToken = await intruderAsksForChange(service, owner, 'intruder.eight@example.net');
  assertError(await post(service, 'email/cancel', {}), 401, 'UNAUTHORIZED');
  assertError(await post(service, 'email/cancel', bearer('0'.repeat(64))), 401, 'UNAUTHORIZED');
  const stray = await post(service, 'email/cancel', bearer(owner.token), { keep: true });
  assertError(stray, 400, 'VALIDATION_FAILED');
  assert.equal(stray.body.issues, [{ path: 'keep', message: 'is not a field of this request' }]);
  assertError(await request(service.url, 'POST', `${AUTH}/email/cancel`, { headers: { ...bearer(owner.token), 'content-type': 'application/json' }, body: '{"a":' }), 400, 'INVALID_JSON');
  assertError(await request(service.url, 'POST', `${AUTH}/email/cancel`, { headers: { ...bearer(owner.token), 'content-type': 'application/json' }, body: '[]' }), 400, 'VALIDATION_FAILED');
  assertError(await request(service.url, 'POST', `${AUTH}/email/cancel`, { headers: { ...bearer(owner.token), 'content-type': 'text/plain' }, body: 'x' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  assertError(await request(service.url, 'DELETE', `${AUTH}/email/pending`, { headers: bearer(owner.token) }), 405, 'METHOD_NOT_ALLOWED');
  assertError(await request(service.url, 'GET', `${AUTH}/email/pending`, {}), 401, 'UNAUTHORIZED');
  assert.is((await pending(service, owner)).new_email, 'intruder.eight@example.net');
  // The owner's cookie from another site cannot cancel it either (nor anything else).
  const crossSite = await post(service, 'email/cancel', { cookie: `svc_token=${owner.token}`, origin: 'https://evil.example' });
  assertError(crossSite, 403, 'FORBIDDEN');
  assert.is((await post(service, 'email/confirm', {}, { token: changeToken })).status, 200, 'the link still works: nothing above cancelled it');
});

test.run();
