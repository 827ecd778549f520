import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, assertError, bearer, me, registerAndVerify } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';

// What HTTP adds to POST /api/v1/auth/api-key/rotate: an answer never cached, a request with
// no body, no credentials, and tRPC's transport. The rotation's rules (grace windows, the old
// key's reach, other instances) are tested in process: tests/auth.api-key.caller.test.ts.

const test = suite<{ service: TestService }>('REST API key rotation: POST /api/v1/auth/api-key/rotate');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

function rotate(service: TestService, credential: string, body: unknown = {}) {
  return request(service.url, 'POST', `${AUTH}/api-key/rotate`, { json: body, headers: bearer(credential) });
}

test('over REST: the answer is never cached; a request with no body rotates at once; without credentials 401', async ({ service }) => {
  const account = await registerAndVerify(service, 'rotate.rest@example.com');
  const rotated = await rotate(service, account.token);
  assert.is(rotated.status, 200, rotated.text);
  assert.is(rotated.headers.get('cache-control'), 'no-store');
  const withoutBody = await request(service.url, 'POST', `${AUTH}/api-key/rotate`, { headers: { ...bearer(account.token), 'content-type': 'application/json' } });
  assert.is(withoutBody.status, 200, withoutBody.text);
  assertError(await me(service, bearer(rotated.body.api_key)), 401, 'UNAUTHORIZED');
  assert.is((await me(service, bearer(withoutBody.body.api_key))).status, 200);
  assertError(await request(service.url, 'POST', `${AUTH}/api-key/rotate`, { json: {} }), 401, 'UNAUTHORIZED');
});

test('over tRPC, auth.rotateApiKey with no input rotates at once', async ({ service }) => {
  const account = await registerAndVerify(service, 'rotate.trpc@example.com');
  const rotated = await request(service.url, 'POST', '/trpc/auth.rotateApiKey', { headers: { ...bearer(account.token), 'content-type': 'application/json' }, body: '' });
  assert.is(rotated.status, 200, rotated.text);
  assert.match(rotated.body.result.data.api_key, /^[0-9a-f]{64}$/);
  assertError(await me(service, bearer(account.apiKey)), 401, 'UNAUTHORIZED');
});

test.run();
