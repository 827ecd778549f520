import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, assertError, bearer, issuePaths, login, me, nextMail, registerAndVerify, tokenUsed, type Account } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { data, trpcOver } from './helpers/trpc-http.ts';

// The operator's account tools (docs/API.md, Operator API): find an account by its address,
// and sign it out everywhere, as its owner's "sign out everywhere" does. Admins only, audited,
// and the owner is told.

const ADMIN = '/api/v1/admin';
const SUMMARY_KEYS = ['company', 'created_at', 'email', 'email_verified', 'id', 'mfa', 'name', 'plan', 'role'];
const NOTICE = /administrator signed your Gatehouse account out everywhere/;

type Context = { service: TestService; admin: Account; user: Account };
const test = suite<Context>('REST admin: find an account, sign it out everywhere');

test.before(async (context) => {
  context.service = await startTestApp();
  context.admin = await registerAndVerify(context.service, 'operator@example.com');
  await context.service.deps.db.query(`UPDATE accounts SET role = 'admin' WHERE id = $1`, [context.admin.user.id]);
  context.user = await registerAndVerify(context.service, 'just.a.user@example.com');
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
const liveSessions = async (service: TestService, accountId: number) =>
  (await service.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions WHERE account_id = $1 AND revoked_at IS NULL', [accountId]))[0].n;

/** A pending e-mail change (its link to the new address) and a reset link, as an intruder with the password would ask for. */
async function pendingLinks(service: TestService, account: Account, newEmail: string): Promise<{ change: string; reset: string }> {
  const seenNew = service.smtp.mailsTo(newEmail).length;
  const asked = await request(service.url, 'POST', `${AUTH}/email/change`, { json: { new_email: newEmail, password: account.password }, headers: bearer(account.token) });
  assert.is(asked.status, 200, asked.text);
  const change = linkToken(await nextMail(service, newEmail, seenNew, /confirm-email\?token=/), '/confirm-email');
  const seen = service.smtp.mailsTo(account.email).length;
  assert.is((await request(service.url, 'POST', `${AUTH}/password/forgot`, { json: { email: account.email } })).status, 200);
  const reset = linkToken(await nextMail(service, account.email, seen, /reset-password\?token=/), '/reset-password');
  return { change, reset };
}

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

test('findAccount: the account by its address, in any case and spacing, as its user object without the API key, plus mfa', async ({ service, admin }) => {
  const target = await registerAndVerify(service, 'found.me@example.com', { name: 'Found Me', company: 'Lookups Ltd' });
  const audited = (await auditOf(service, admin.user.id)).length;
  const answer = await find(service, `?email=${encodeURIComponent('  Found.Me@EXAMPLE.com ')}`, admin.token);
  assert.is(answer.status, 200, answer.text);
  assert.is(answer.headers.get('cache-control'), 'no-store');
  assert.equal(Object.keys(answer.body).sort(), ['account', 'success']);
  assert.equal(Object.keys(answer.body.account).sort(), SUMMARY_KEYS);
  const { api_key: apiKey, ...user } = target.user;
  assert.equal(answer.body.account, { ...user, mfa: false });
  assert.not.match(answer.text, apiKey, 'the key is nowhere in the answer');

  // A second factor as the mfa module stores an enabled authenticator.
  await service.deps.db.query('INSERT INTO mfa_totp (account_id, secret_sealed, enabled_at, created_at) VALUES ($1, $2, $3, $3)', [target.user.id, 'sealed', service.clock.now()]);
  assert.is((await find(service, `?email=${target.email}`, admin.token)).body.account.mfa, true);

  const viaTrpc = await trpcOver(service).query(admin, 'admin.findAccount', { email: 'FOUND.ME@example.com' });
  assert.is(viaTrpc.status, 200, viaTrpc.text);
  assert.equal(data(viaTrpc), { success: true, account: { ...user, mfa: true } });

  assertError(await find(service, '?email=nobody@example.com', admin.token), 404, 'NOT_FOUND');
  const reads = (await auditOf(service, admin.user.id)).slice(audited).filter((row) => row.event === 'admin.account_read');
  assert.equal(reads.map((row) => row.data), [
    { email: target.email, account: target.user.id },
    { email: target.email, account: target.user.id },
    { email: target.email, account: target.user.id },
    { email: 'nobody@example.com', account: null },
  ]);
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

test('revokeSessions: every live session ends at once, pending links die, the owner is mailed, both logs say so', async ({ service, admin }) => {
  const owner = await registerAndVerify(service, 'signed.out@example.com');
  const second = (await login(service, owner.email, owner.password)).body.token as string;
  assert.is((await me(service, bearer(second))).status, 200, 'in use (and cached) before');
  const links = await pendingLinks(service, owner, 'intruder@example.net');
  const seen = service.smtp.mailsTo(owner.email).length;

  const answer = await revokeAll(service, owner.user.id, admin.token);
  assert.is(answer.status, 200, answer.text);
  assert.equal(answer.body, { success: true, revoked: 2 });
  for (const token of [owner.token, second]) assertError(await me(service, bearer(token)), 401, 'UNAUTHORIZED');
  assert.is(await liveSessions(service, owner.user.id), 0);
  assert.is((await me(service, bearer(owner.apiKey))).status, 200, 'the API key is not a session: it keeps working');
  assert.is((await me(service, bearer(admin.token))).status, 200, "the admin's own session is untouched");

  assert.ok(await tokenUsed(service, links.change), 'the e-mail change link is void');
  assert.ok(await tokenUsed(service, links.reset), 'the reset link is void');
  assertError(await request(service.url, 'POST', `${AUTH}/email/confirm`, { json: { token: links.change } }), 400, 'INVALID_TOKEN');

  const notice = await nextMail(service, owner.email, seen, NOTICE);
  assert.is(notice.subject, 'An administrator signed your Gatehouse account out everywhere');
  assert.match(notice.text, 'pending e-mail change or password reset link no longer works');
  assert.match(notice.text, `${service.env.PUBLIC_URL}/login`);

  const ownerLog = await auditOf(service, owner.user.id);
  assert.equal(ownerLog[ownerLog.length - 1], { event: 'session.revoked', data: { count: 2, by: 'admin' }, ip: null }, "the admin's address is not the owner's business");
  const activity = await request(service.url, 'GET', `${AUTH}/activity`, { headers: bearer(owner.apiKey) });
  assert.is(activity.body.items[0].event, 'session.revoked');
  const adminLog = await auditOf(service, admin.user.id);
  assert.equal(adminLog[adminLog.length - 1], { event: 'admin.sessions_revoked', data: { account: owner.user.id, revoked: 2 }, ip: '127.0.0.1' });

  const again = await revokeAll(service, owner.user.id, admin.token);
  assert.equal(again.body, { success: true, revoked: 0 }, 'nothing left to end');
  assert.ok(await nextMail(service, owner.email, seen + 1, NOTICE), 'told again: an admin acted on the account');
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

test('resetMfa: the owner who lost every factor signs in with the password again; audited, mailed; admins only', async ({ service, admin, user }) => {
  const owner = await registerAndVerify(service, 'lost.factor@example.com');
  const setup = await request(service.url, 'POST', `${AUTH}/mfa/totp/setup`, { json: { password: owner.password }, headers: bearer(owner.token) });
  const enabled = await request(service.url, 'POST', `${AUTH}/mfa/totp/enable`, { json: { code: totpCodeAt(setup.body.secret, service.clock.now()) }, headers: bearer(owner.token) });
  assert.is(enabled.status, 200, enabled.text);
  assertError(await login(service, owner.email), 403, 'MFA_REQUIRED');
  assert.is((await find(service, `?email=${owner.email}`, admin.token)).body.account.mfa, true);

  const reset = (id: number | string, credential?: string, json: unknown = {}) => request(service.url, 'POST', `${ADMIN}/accounts/${id}/reset-mfa`, { json, headers: credential ? bearer(credential) : {} });
  assertError(await reset(owner.user.id, user.token), 403, 'FORBIDDEN');
  assertError(await reset(owner.user.id), 401, 'UNAUTHORIZED');
  assertError(await reset(2147483000, admin.token), 404, 'NOT_FOUND');
  assertError(await reset('abc', admin.token), 400, 'VALIDATION_FAILED');
  assertError(await reset(owner.user.id, admin.token, { everything: true }), 400, 'VALIDATION_FAILED');
  assertError(await login(service, owner.email), 403, 'MFA_REQUIRED');

  const seen = service.smtp.mailsTo(owner.email).length;
  const done = await reset(owner.user.id, admin.token);
  assert.is(done.status, 200, done.text);
  assert.equal(done.body, { success: true });
  await nextMail(service, owner.email, seen, /administrator turned off your second factor/);
  assert.is((await login(service, owner.email)).status, 200, 'the password alone signs in');
  assert.is((await find(service, `?email=${owner.email}`, admin.token)).body.account.mfa, false);
  const ownerLog = (await auditOf(service, owner.user.id)).filter((row) => row.event === 'mfa.disabled');
  assert.equal(ownerLog.map((row) => row.data), [{ by: 'admin', totp: true, passkeys: 0 }]);
  assert.ok((await auditOf(service, admin.user.id)).some((row) => row.event === 'admin.mfa_reset' && row.data?.account === owner.user.id));
  const overTrpc = await trpcOver(service).mutation(admin, 'admin.resetMfa', { id: owner.user.id });
  assert.is(overTrpc.status, 200, overTrpc.text);
  assert.equal(data(overTrpc), { success: true });
  // Nothing was left to remove: the owner's log has no second entry (and no second notice is sent).
  assert.equal((await auditOf(service, owner.user.id)).filter((row) => row.event === 'mfa.disabled').length, 1);
});

test.run();
