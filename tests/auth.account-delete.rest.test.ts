import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, bearer, me } from './helpers/auth.ts';
import { NOTHING_LEFT, accountWithSite, auditRows, owned } from './helpers/account-deletion.ts';
import { request, startTestApp, type HttpResult, type TestService } from './helpers/service.ts';

// POST /api/v1/auth/account/delete (docs/API.md, Account lifecycle) over REST: what HTTP adds to the
// rules tested in process in tests/auth.account-delete.caller.test.ts. A request with no
// credential, and bodies no client sends, remove nothing; one with the password removes it all.

const test = suite<{ service: TestService }>('REST account deletion: POST /api/v1/auth/account/delete');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const deleteAccount = (service: TestService, headers: Record<string, string>, json?: unknown) =>
  request(service.url, 'POST', `${AUTH}/account/delete`, json === undefined ? { headers } : { headers, json });

test('without credentials, or with a credential that is not valid, it is 401 UNAUTHORIZED and nothing is removed', async ({ service }) => {
  const { account, siteIds, channelIds } = await accountWithSite(service, 'delete.anonymous@example.com');
  const before = await owned(service, account.user.id, siteIds, channelIds);
  const anonymous = await deleteAccount(service, {}, { password: PASSWORD });
  assertError(anonymous, 401, 'UNAUTHORIZED');
  assert.is(anonymous.headers.get('www-authenticate'), 'Bearer');
  assertError(await deleteAccount(service, bearer('not.a.jwt'), { password: PASSWORD }), 401, 'UNAUTHORIZED');
  assertError(await deleteAccount(service, bearer('0'.repeat(64)), { password: PASSWORD }), 401, 'UNAUTHORIZED');
  assert.equal(await owned(service, account.user.id, siteIds, channelIds), before);
  assert.is((await auditRows(service, 'account.deleted', account.user.id)).length, 0);
});

test('a missing or malformed body is 400 VALIDATION_FAILED (naming password when the body is an object), and nothing is removed', async ({ service }) => {
  const { account, siteIds, channelIds } = await accountWithSite(service, 'delete.malformed@example.com');
  const before = await owned(service, account.user.id, siteIds, channelIds);
  const cases: Array<[string, HttpResult]> = [
    ['no body', await deleteAccount(service, bearer(account.token))],
    ['{}', await deleteAccount(service, bearer(account.token), {})],
    ['empty password', await deleteAccount(service, bearer(account.token), { password: '' })],
    ['a number', await deleteAccount(service, bearer(account.token), { password: 12345678 })],
    ['null', await deleteAccount(service, bearer(account.token), { password: null })],
    ['an over-long password', await deleteAccount(service, bearer(account.token), { password: 'p'.repeat(129) })],
    ['another field', await deleteAccount(service, bearer(account.token), { pass: PASSWORD })],
    ['an array', await deleteAccount(service, bearer(account.token), [PASSWORD])],
  ];
  for (const [what, result] of cases) {
    assertError(result, 400, 'VALIDATION_FAILED');
    // An object names the field; a body that is not an object at all says so in the message.
    // (A password left out is asked for once the body is otherwise valid: an account without one may leave it out.)
    const named = what === 'another field' ? 'pass' : 'password';
    if (what !== 'an array') assert.ok((result.body.issues ?? []).some((issue: { path: string }) => issue.path === named), `${what}: ${result.text}`);
  }
  const garbage = await request(service.url, 'POST', `${AUTH}/account/delete`, {
    headers: { ...bearer(account.token), 'content-type': 'application/json' },
    body: '{"password": "correct horse',
  });
  // Bytes that are not JSON at all: the gateway's 400 for every route (docs/API.md, Validation).
  assertError(garbage, 400, 'INVALID_JSON');
  assert.equal(await owned(service, account.user.id, siteIds, channelIds), before);
  assert.is((await me(service, bearer(account.token))).status, 200);
});

test('with the password over REST: 200 {success: true}; the account, its site and channel are gone, and its JWT answers 401', async ({ service }) => {
  const { account, siteIds, channelIds } = await accountWithSite(service, 'delete.over.rest@example.com');
  const deleted = await deleteAccount(service, bearer(account.token), { password: PASSWORD });
  assert.is(deleted.status, 200, deleted.text);
  assert.equal(deleted.body, { success: true });
  assert.equal(await owned(service, account.user.id, siteIds, channelIds), NOTHING_LEFT);
  assertError(await me(service, bearer(account.token)), 401, 'UNAUTHORIZED');
  assert.is((await auditRows(service, 'account.deleted', account.user.id)).length, 1);
});

test.run();
