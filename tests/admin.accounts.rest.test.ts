import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, assertError, bearer, issuePaths, login, me, nextMail, registerAndVerify, startWithAdmin, type WithAdmin } from './helpers/auth.ts';
import { liveSessions } from './helpers/accounts.ts';
import { request, type TestService } from './helpers/service.ts';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { data, trpcOver } from './helpers/trpc-http.ts';

// The operator's account tools (docs/API.md, Operator API) over REST and tRPC: what the transports
// add to the rules called in process in tests/admin.accounts.caller.test.ts. A refusal on every
// route and over tRPC, an address in the query string, an id in the path, no-store.

const ADMIN = '/api/v1/admin';
const NOTICE = /administrator signed your Gatehouse account out everywhere/;

const test = suite<WithAdmin>('REST admin: find an account, sign it out everywhere');

test.before(async (context) => {
  Object.assign(context, await startWithAdmin());
});
test.after(async ({ service }) => {
  await service?.close();
});

const find = (service: TestService, query: string, credential?: string) =>
  request(service.url, 'GET', `${ADMIN}/accounts${query}`, { headers: credential ? bearer(credential) : {} });
const revokeAll = (service: TestService, id: number | string, credential?: string, json: unknown = {}) =>
  request(service.url, 'POST', `${ADMIN}/accounts/${id}/revoke-sessions`, { json, headers: credential ? bearer(credential) : {} });

type AuditRow = { event: string; data: Record<string, unknown> | null; ip: string | null };
const auditOf = (service: TestService, accountId: number) =>
  service.deps.db.query<AuditRow>('SELECT event, data, ip FROM audit_events WHERE account_id = $1 ORDER BY id', [accountId]);

test('both routes are 403 FORBIDDEN for an account that is not an admin, by JWT or API key, over REST and tRPC; 401 without credentials', async ({ service, user, admin }) => {
  const calls = [() => ['GET', `/accounts?email=${encodeURIComponent(admin.email)}`], () => ['POST', `/accounts/${admin.user.id}/revoke-sessions`]];
  for (const call of calls) {
    const [method, path] = call();
    const json = method === 'POST' ? {} : undefined;
    for (const credential of [user.token, user.apiKey]) {
      assertError(await request(service.url, method, `${ADMIN}${path}`, { json, headers: bearer(credential) }), 403, 'FORBIDDEN');
    }
    assertError(await request(service.url, method, `${ADMIN}${path}`, { json }), 401, 'UNAUTHORIZED');
  }
  const trpc = trpcOver(service);
  const found = await trpc.query(user, 'admin.findAccount', { email: admin.email });
  assert.is(found.status, 403);
  assert.is(found.body.error.data.appCode, 'FORBIDDEN');
  const revoked = await trpc.mutation(user, 'admin.revokeSessions', { id: admin.user.id });
  assert.is(revoked.status, 403);
  assert.is((await trpc.mutation(undefined, 'admin.revokeSessions', { id: admin.user.id })).status, 401);
  assert.is((await me(service, bearer(admin.token))).status, 200, "the admin's session is untouched");
  assert.equal((await auditOf(service, user.user.id)).filter((row) => row.event.startsWith('admin.')), [], 'a refusal is no admin action');
});

test('findAccount over REST and tRPC: the address in the query string, no-store, the same account both ways', async ({ service, admin }) => {
  const target = await registerAndVerify(service, 'found.me@example.com', { name: 'Found Me', company: 'Lookups Ltd' });
  const answer = await find(service, `?email=${encodeURIComponent('  Found.Me@EXAMPLE.com ')}`, admin.token);
  assert.is(answer.status, 200, answer.text);
  assert.is(answer.headers.get('cache-control'), 'no-store');
  const { api_key: apiKey, ...user } = target.user;
  assert.equal(answer.body, { success: true, account: { ...user, mfa: false } });
  assert.not.match(answer.text, apiKey, 'the key is nowhere in the answer');
  const viaTrpc = await trpcOver(service).query(admin, 'admin.findAccount', { email: 'FOUND.ME@example.com' });
  assert.is(viaTrpc.status, 200, viaTrpc.text);
  assert.equal(data(viaTrpc), answer.body);
  assertError(await find(service, '?email=nobody@example.com', admin.token), 404, 'NOT_FOUND');
});

test('findAccount refuses what is not a bare address, and fields it does not know, with 400 naming them', async ({ service, admin }) => {
  const cases: Array<[string, string[]]> = [
    ['', ['email']],
    ['?email=', ['email']],
    ['?email=not-an-address', ['email']],
    [`?email=${encodeURIComponent('Eve <eve@example.com>')}`, ['email']],
    [`?email=${'a'.repeat(250)}@example.com`, ['email']],
    ['?email=ok@example.com&role=admin', ['role']],
  ];
  for (const [query, paths] of cases) {
    const refused = await find(service, query, admin.token);
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(refused), paths, query);
  }
  assertError(await find(service, '?email=x%00y@example.com', admin.token), 400, 'VALIDATION_FAILED');
});

test('revokeSessions over REST: the id in the path, 200 with how many ended', async ({ service, admin }) => {
  const owner = await registerAndVerify(service, 'signed.out@example.com');
  const answer = await revokeAll(service, owner.user.id, admin.token);
  assert.is(answer.status, 200, answer.text);
  assert.equal(answer.body, { success: true, revoked: 1 });
  assertError(await me(service, bearer(owner.token)), 401, 'UNAUTHORIZED');
  assert.is(await liveSessions(service, owner.user.id), 0);
});

test('revokeSessions over tRPC takes the id as a number', async ({ service, admin }) => {
  const owner = await registerAndVerify(service, 'signed.out.trpc@example.com');
  const seen = service.smtp.mailsTo(owner.email).length;
  const answer = await trpcOver(service).mutation(admin, 'admin.revokeSessions', { id: owner.user.id });
  assert.is(answer.status, 200, answer.text);
  assert.equal(data(answer), { success: true, revoked: 1 });
  assertError(await me(service, bearer(owner.token)), 401, 'UNAUTHORIZED');
  assert.ok(await nextMail(service, owner.email, seen, NOTICE));
});

test('revokeSessions: an unknown account is 404, a bad id or a stray field 400; none of them ends a session', async ({ service, admin }) => {
  const bystander = await registerAndVerify(service, 'bystander@example.com');
  assertError(await revokeAll(service, 2_147_483_647, admin.token), 404, 'NOT_FOUND');
  for (const id of ['abc', '0', '-1', '1.5', '99999999999', '1e3', `${bystander.user.id}x`]) {
    const refused = await revokeAll(service, id, admin.token);
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(refused), ['id'], id);
  }
  const stray = await revokeAll(service, bystander.user.id, admin.token, { keep_current: true });
  assertError(stray, 400, 'VALIDATION_FAILED');
  assert.equal(issuePaths(stray), ['keep_current']);
  assertError(await revokeAll(service, '%00', admin.token), 400, 'VALIDATION_FAILED');

  const trpc = trpcOver(service);
  for (const input of [{ id: true }, { id: [bystander.user.id] }, { id: null }, {}, { id: bystander.user.id, extra: 1 }]) {
    const refused = await trpc.mutation(admin, 'admin.revokeSessions', input);
    assert.is(refused.status, 400, JSON.stringify(input));
    assert.is(refused.body.error.data.appCode, 'VALIDATION_FAILED');
  }
  assert.is((await me(service, bearer(bystander.token))).status, 200);
  assert.is(await liveSessions(service, bystander.user.id), 1);
  const revokes = (await auditOf(service, admin.user.id)).filter((row) => row.event === 'admin.sessions_revoked');
  assert.not.ok(revokes.some((row) => row.data?.account === bystander.user.id), 'nothing recorded as done');
});

test('resetMfa over REST and tRPC: the id in the path (400 when it cannot be one), admins only, 200 {success: true}', async ({ service, admin, user }) => {
  const owner = await registerAndVerify(service, 'lost.factor@example.com');
  const setup = await request(service.url, 'POST', `${AUTH}/mfa/totp/setup`, { json: { password: owner.password }, headers: bearer(owner.token) });
  const enabled = await request(service.url, 'POST', `${AUTH}/mfa/totp/enable`, { json: { code: totpCodeAt(setup.body.secret, service.clock.now()) }, headers: bearer(owner.token) });
  assert.is(enabled.status, 200, enabled.text);
  assertError(await login(service, owner.email), 403, 'MFA_REQUIRED');

  const reset = (id: number | string, credential?: string, json: unknown = {}) => request(service.url, 'POST', `${ADMIN}/accounts/${id}/reset-mfa`, { json, headers: credential ? bearer(credential) : {} });
  assertError(await reset(owner.user.id, user.token), 403, 'FORBIDDEN');
  assertError(await reset(owner.user.id), 401, 'UNAUTHORIZED');
  assertError(await reset('abc', admin.token), 400, 'VALIDATION_FAILED');
  assertError(await reset('%00', admin.token), 400, 'VALIDATION_FAILED');
  assertError(await login(service, owner.email), 403, 'MFA_REQUIRED');

  const done = await reset(owner.user.id, admin.token);
  assert.is(done.status, 200, done.text);
  assert.equal(done.body, { success: true });
  assert.is((await login(service, owner.email)).status, 200, 'the password alone signs in');
  const overTrpc = await trpcOver(service).mutation(admin, 'admin.resetMfa', { id: owner.user.id });
  assert.is(overTrpc.status, 200, overTrpc.text);
  assert.equal(data(overTrpc), { success: true });
});

test.run();
