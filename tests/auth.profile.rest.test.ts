import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { createGatehouseClient, TRPCClientError, type RouterInputs } from '../client/src/index.ts';
import { apiKeyCacheKey, authCacheOf } from '../server/src/modules/sessions/sessions.cache.ts';
import { AUTH, assertError, bearer, me, registerAndVerify, type Account } from './helpers/auth.ts';
import { profileEvents, storedProfile } from './helpers/accounts.ts';
import { request, startTestApp, testFetch, type HttpResult, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// docs/API.md, Account lifecycle (Profile): POST /api/v1/auth/profile and auth.updateProfile.

const test = suite<{ service: TestService }>('REST profile: /profile changes name and company, /me shows it at once');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});


const updateProfile = (service: TestService, headers: Record<string, string>, body: unknown) =>
  request(service.url, 'POST', `${AUTH}/profile`, { json: body, headers });
/** A body sent as it is, for what no client would send. */
const sendRaw = (service: TestService, headers: Record<string, string>, body: string, type = 'application/json') =>
  request(service.url, 'POST', `${AUTH}/profile`, { body, headers: { ...headers, 'content-type': type } });

const newAccount = (service: TestService, email: string) => registerAndVerify(service, email, { name: 'Ada Lovelace', company: 'Analytical Engines' });



/** A 200 answering `{ success, user }`, its user the one /me now shows. */
async function assertUpdated(service: TestService, result: HttpResult, account: Account): Promise<Record<string, unknown>> {
  assert.is(result.status, 200, result.text);
  assert.equal(Object.keys(result.body).sort(), ['success', 'user']);
  assert.is(result.body.success, true);
  const shown = await me(service, bearer(account.token));
  assert.equal(result.body.user, shown.body.user, 'the answer is /me as it now is');
  return result.body.user;
}

test('without credentials, or with dead ones: 401 UNAUTHORIZED, and nothing changes', async ({ service }) => {
  const account = await newAccount(service, 'profile.anonymous@example.com');
  const before = await storedProfile(service, account);
  const dead: Array<Record<string, string>> = [{}, bearer('not-a-jwt'), bearer('0'.repeat(64)), { cookie: 'svc_token=garbage' }];
  for (const headers of dead) {
    const refused = await updateProfile(service, headers, { name: 'Mallory' });
    assertError(refused, 401, 'UNAUTHORIZED');
    assert.is(refused.headers.get('www-authenticate'), 'Bearer');
  }
  assert.equal(await storedProfile(service, account), before);
  assert.equal(await profileEvents(service, account), []);
});

test('by Bearer JWT: the name is trimmed, stored, answered as /me shows it, and recorded as changed', async ({ service }) => {
  const account = await newAccount(service, 'profile.jwt@example.com');
  const user = await assertUpdated(service, await updateProfile(service, bearer(account.token), { name: '  Ada King  ' }), account);
  assert.equal(user, { ...account.user, name: 'Ada King' }, 'only the name moved');
  assert.equal(await storedProfile(service, account).then(({ name, company }) => ({ name, company })), { name: 'Ada King', company: 'Analytical Engines' });
  assert.equal(await profileEvents(service, account), [['name']]);
});

test('by API key: the company changes, and /me by JWT shows it at once', async ({ service }) => {
  const account = await newAccount(service, 'profile.key@example.com');
  const result = await updateProfile(service, bearer(account.apiKey), { company: '  Difference Engines Ltd ' });
  const user = await assertUpdated(service, result, account);
  assert.is(user.company, 'Difference Engines Ltd');
  assert.is(user.api_key, account.apiKey);
  assert.is((await me(service, bearer(account.apiKey))).body.user.company, 'Difference Engines Ltd');
  assert.equal(await profileEvents(service, account), [['company']]);
});

test('by the svc_token cookie (as JSON, from this site): both fields change; from another site: 403 and nothing changes', async ({ service }) => {
  const account = await newAccount(service, 'profile.cookie@example.com');
  const cookie = { cookie: `svc_token=${account.token}` };
  const crossSite = await updateProfile(service, { ...cookie, origin: 'https://evil.example' }, { name: 'Mallory' });
  assertError(crossSite, 403, 'FORBIDDEN');
  assert.is((await storedProfile(service, account)).name, 'Ada Lovelace');

  const result = await updateProfile(service, { ...cookie, origin: service.url }, { name: 'Countess of Lovelace', company: 'Babbage & Co' });
  const user = await assertUpdated(service, result, account);
  assert.equal([user.name, user.company], ['Countess of Lovelace', 'Babbage & Co']);
  const shown = await me(service, cookie);
  assert.equal([shown.body.user.name, shown.body.user.company], ['Countess of Lovelace', 'Babbage & Co']);
  assert.equal(await profileEvents(service, account), [['name', 'company']]);
});

test('GET /activity lists profile.updated, with the IP and user agent of the change', async ({ service }) => {
  const account = await newAccount(service, 'profile.activity@example.com');
  const changed = await updateProfile(service, { ...bearer(account.token), 'user-agent': 'profile-test/1.0' }, { name: 'Ada B.' });
  assert.is(changed.status, 200, changed.text);
  const activity = await request(service.url, 'GET', `${AUTH}/activity`, { headers: bearer(account.token) });
  assert.is(activity.status, 200, activity.text);
  const [newest] = activity.body.items;
  assert.is(newest.event, 'profile.updated');
  assert.is(newest.user_agent, 'profile-test/1.0');
  assert.type(newest.ip, 'string');
});

test('garbage bodies are a 4xx with the error shape, and nothing stored changes', async ({ service }) => {
  const account = await newAccount(service, 'profile.garbage@example.com');
  const before = await storedProfile(service, account);
  const auth = bearer(account.token);
  assertError(await sendRaw(service, auth, '{"name":'), 400, 'INVALID_JSON');
  assertError(await sendRaw(service, auth, 'name=Mallory', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
  assertError(await sendRaw(service, auth, 'Mallory', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
  for (const body of ['[]', '[{"name":"Mallory"}]', '"Mallory"', '42', 'null', 'true']) {
    assertError(await sendRaw(service, auth, body), 400, 'VALIDATION_FAILED');
  }
  // An empty body is no input at all: nothing to change. (The rules of the input itself are
  // tested in process: tests/auth.profile.caller.test.ts.)
  assertError(await sendRaw(service, auth, ''), 400, 'VALIDATION_FAILED');
  // One wrong field still comes back by name through the REST mapping.
  const refused = await updateProfile(service, auth, { name: 5 });
  assertError(refused, 400, 'VALIDATION_FAILED');
  assert.equal(refused.body.issues, [{ path: 'name', message: 'must be text' }]);
  // Over 16 KiB: refused before it is read.
  assertError(await updateProfile(service, auth, { name: 'x'.repeat(17 * 1024) }), 413, 'PAYLOAD_TOO_LARGE');
  assert.equal(await storedProfile(service, account), before);
  assert.equal(await profileEvents(service, account), []);
  assert.is((await me(service, auth)).body.user.name, 'Ada Lovelace');
});

test('tRPC auth.updateProfile: the typed client changes the profile, and a stray field is refused by name', async ({ service }) => {
  const account = await newAccount(service, 'profile.trpc@example.com');
  const client = createGatehouseClient({ fetch: testFetch, url: `${service.url}/trpc`, token: () => account.token });
  const input: RouterInputs['auth']['updateProfile'] = { name: ' Ada over tRPC ', company: null };
  const result = await client.auth.updateProfile.mutate(input);
  assert.is(result.success, true);
  assert.equal(result.user, { ...account.user, name: 'Ada over tRPC', company: null });
  assert.equal((await client.auth.me.query()).user, result.user);
  assert.equal(await profileEvents(service, account), [['name', 'company']]);

  let refused: unknown;
  try {
    await client.auth.updateProfile.mutate({ name: 'X', nick: 'x' } as RouterInputs['auth']['updateProfile']);
  } catch (error) {
    refused = error;
  }
  assert.instance(refused, TRPCClientError);
  const data = (refused as TRPCClientError<any>).data;
  assert.is(data?.appCode, 'VALIDATION_FAILED');
  assert.equal(data?.issues, [{ path: 'nick', message: 'is not a field of this request' }]);
  assert.is((await me(service, bearer(account.token))).body.user.name, 'Ada over tRPC');

  const anonymous = createGatehouseClient({ fetch: testFetch, url: `${service.url}/trpc` });
  let unauthorized: unknown;
  try {
    await anonymous.auth.updateProfile.mutate({ name: 'Mallory' });
  } catch (error) {
    unauthorized = error;
  }
  assert.is((unauthorized as TRPCClientError<any>).data?.appCode, 'UNAUTHORIZED');
});

// The auth cache (sessions.cache.ts) keeps the account row /me answers with; it is on only
// with a database server that can LISTEN.
if (process.env.DATABASE_URL) {
  test('a cached /me never shows the old name: the change evicts the account here, before any notice', async ({ service }) => {
    await eventually('the auth cache listening', () => authCacheOf(service.deps).enabled);
    const account = await newAccount(service, 'profile.cache@example.com');
    const cached = () => authCacheOf(service.deps).get(apiKeyCacheKey(account.apiKey));
    await eventually('/me by API key cached', async () => (await me(service, bearer(account.apiKey))).status === 200 && cached());
    assert.is(cached()!.account.name, 'Ada Lovelace');

    // With the accounts trigger off no instance is told: only this instance's own eviction can help.
    const sql = new pg.Client({ connectionString: service.env.DATABASE_URL });
    await sql.connect();
    try {
      await sql.query('ALTER TABLE accounts DISABLE TRIGGER accounts_auth_notify');
      const result = await updateProfile(service, bearer(account.token), { name: 'Ada Uncached' });
      assert.is(result.status, 200, result.text);
      assert.is((await me(service, bearer(account.apiKey))).body.user.name, 'Ada Uncached', 'the API key\'s cached row was dropped');
      assert.is((await me(service, bearer(account.token))).body.user.name, 'Ada Uncached', 'so was the session\'s');
    } finally {
      await sql.query('ALTER TABLE accounts ENABLE TRIGGER accounts_auth_notify');
      await sql.end();
    }
  });
}

test.run();
