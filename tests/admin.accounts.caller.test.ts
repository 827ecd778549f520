import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { assertError, bearer, issuePaths, nextMail, registerAndVerify, startWithAdmin, tokenUsed, type WithAdmin } from './helpers/auth.ts';
import { CONFIRM_LINK, intruderAsksForChange, liveSessions, resetToken } from './helpers/accounts.ts';
import { activityEvents, answerOf, callerOf, loginCall as login, meCall as me } from './helpers/caller.ts';
import type { TestService } from './helpers/service.ts';

// The operator's account tools (docs/API.md, Operator API): the rules of admin.findAccount,
// admin.revokeSessions and admin.resetMfa, called in process. Admins only, audited, and the owner
// is told. What HTTP adds (a refusal on every route and over tRPC, an address in the query
// string, an id in the path, no-store) is tested in tests/admin.accounts.rest.test.ts.

const SUMMARY_KEYS = ['company', 'created_at', 'email', 'email_verified', 'id', 'mfa', 'name', 'plan', 'role'];
const NOTICE = /administrator signed your Gatehouse account out everywhere/;

const test = suite<WithAdmin>('admin.findAccount, admin.revokeSessions and admin.resetMfa: an operator acting on one account');

test.before(async (context) => {
  Object.assign(context, await startWithAdmin());
});
test.after(async ({ service }) => {
  await service?.close();
});

/** The admin procedures as the holder of `credential`; any input, as a client that ignores the types would send it, answered as REST would. */
const ops = (service: TestService, credential: string) => callerOf(service, { bearer: credential }).admin;
const find = (service: TestService, credential: string, input: unknown) => answerOf(ops(service, credential).findAccount(input as never));
const revokeAll = (service: TestService, credential: string, input: unknown) => answerOf(ops(service, credential).revokeSessions(input as never));
const resetMfa = (service: TestService, credential: string, input: unknown) => answerOf(ops(service, credential).resetMfa(input as never));

type AuditRow = { event: string; data: Record<string, unknown> | null; ip: string | null };
const auditOf = (service: TestService, accountId: number) =>
  service.deps.db.query<AuditRow>('SELECT event, data, ip FROM audit_events WHERE account_id = $1 ORDER BY id', [accountId]);

test('findAccount: the account by its address, in any case and spacing, as its user object without the API key, plus mfa', async ({ service, admin }) => {
  const target = await registerAndVerify(service, 'found.me@example.com', { name: 'Found Me', company: 'Lookups Ltd' });
  const audited = (await auditOf(service, admin.user.id)).length;
  const answer = await find(service, admin.token, { email: '  Found.Me@EXAMPLE.com ' });
  assert.is(answer.status, 200, answer.text);
  assert.equal(Object.keys(answer.body).sort(), ['account', 'success']);
  assert.equal(Object.keys(answer.body.account).sort(), SUMMARY_KEYS);
  const { api_key: apiKey, ...user } = target.user;
  assert.equal(answer.body.account, { ...user, mfa: false });
  assert.not.match(answer.text, apiKey, 'the key is nowhere in the answer');

  // A second factor as the mfa module stores an enabled authenticator.
  await service.deps.db.query('INSERT INTO mfa_totp (account_id, secret_sealed, enabled_at, created_at) VALUES ($1, $2, $3, $3)', [target.user.id, 'sealed', service.clock.now()]);
  assert.is((await find(service, admin.token, { email: target.email })).body.account.mfa, true);

  assertError(await find(service, admin.token, { email: 'nobody@example.com' }), 404, 'NOT_FOUND');
  const reads = (await auditOf(service, admin.user.id)).slice(audited).filter((row) => row.event === 'admin.account_read');
  assert.equal(reads.map((row) => row.data), [
    { email: target.email, account: target.user.id },
    { email: target.email, account: target.user.id },
    { email: 'nobody@example.com', account: null },
  ]);
});

test('findAccount refuses what is not a bare address, and fields it does not know, with 400 naming them', async ({ service, admin }) => {
  const cases: Array<[unknown, string[]]> = [
    [{}, ['email']],
    [{ email: '' }, ['email']],
    [{ email: 'not-an-address' }, ['email']],
    [{ email: 'Eve <eve@example.com>' }, ['email']],
    [{ email: `${'a'.repeat(250)}@example.com` }, ['email']],
    [{ email: 'x\u0000y@example.com' }, ['email']],
    [{ email: 'ok@example.com', role: 'admin' }, ['role']],
  ];
  for (const [input, paths] of cases) {
    const refused = await find(service, admin.token, input);
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(refused), paths, JSON.stringify(input));
  }
});

test('revokeSessions: every live session ends at once, pending links die, the owner is mailed, both logs say so', async ({ service, admin }) => {
  const owner = await registerAndVerify(service, 'signed.out@example.com');
  const second = (await login(service, owner.email, owner.password)).body.token as string;
  assert.is((await me(service, bearer(second))).status, 200, 'in use (and cached) before');
  const change = await intruderAsksForChange(service, owner, 'intruder@example.net');
  const reset = await resetToken(service, owner.email);
  const seen = service.smtp.mailsTo(owner.email).length;

  const answer = await revokeAll(service, admin.token, { id: owner.user.id });
  assert.is(answer.status, 200, answer.text);
  assert.equal(answer.body, { success: true, revoked: 3 }, "the owner's two sessions and the intruder's");
  for (const token of [owner.token, second]) assertError(await me(service, bearer(token)), 401, 'UNAUTHORIZED');
  assert.is(await liveSessions(service, owner.user.id), 0);
  assert.is((await me(service, bearer(owner.apiKey))).status, 200, 'the API key is not a session: it keeps working');
  assert.is((await me(service, bearer(admin.token))).status, 200, "the admin's own session is untouched");

  assert.ok(await tokenUsed(service, change), 'the e-mail change link is void');
  assert.ok(await tokenUsed(service, reset), 'the reset link is void');
  assertError(await answerOf(callerOf(service).auth.confirmEmailChange({ token: change })), 400, 'INVALID_TOKEN');

  const notice = await nextMail(service, owner.email, seen, NOTICE);
  assert.is(notice.subject, 'An administrator signed your Gatehouse account out everywhere');
  assert.match(notice.text, 'pending e-mail change or password reset link no longer works');
  assert.match(notice.text, `${service.env.PUBLIC_URL}/login`);
  assert.not.match(notice.text, CONFIRM_LINK);

  const ownerLog = await auditOf(service, owner.user.id);
  assert.equal(ownerLog[ownerLog.length - 1], { event: 'session.revoked', data: { count: 3, by: 'admin' }, ip: null }, "the admin's address is not the owner's business");
  assert.is((await activityEvents(service, bearer(owner.apiKey)))[0], 'session.revoked');
  const adminLog = await auditOf(service, admin.user.id);
  assert.equal(adminLog[adminLog.length - 1], { event: 'admin.sessions_revoked', data: { account: owner.user.id, revoked: 3 }, ip: '127.0.0.1' });

  const again = await revokeAll(service, admin.token, { id: owner.user.id });
  assert.equal(again.body, { success: true, revoked: 0 }, 'nothing left to end');
  assert.ok(await nextMail(service, owner.email, seen + 1, NOTICE), 'told again: an admin acted on the account');
});

test('revokeSessions: an unknown account is 404, a bad id or a stray field 400, a plain user 403; none of them ends a session', async ({ service, admin, user }) => {
  const bystander = await registerAndVerify(service, 'bystander@example.com');
  assertError(await revokeAll(service, admin.token, { id: 2_147_483_647 }), 404, 'NOT_FOUND');
  for (const id of ['abc', 0, -1, 1.5, 99_999_999_999, true, null, [bystander.user.id]]) {
    const refused = await revokeAll(service, admin.token, { id });
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(refused), ['id'], JSON.stringify(id));
  }
  const stray = await revokeAll(service, admin.token, { id: bystander.user.id, keep_current: true });
  assertError(stray, 400, 'VALIDATION_FAILED');
  assert.equal(issuePaths(stray), ['keep_current']);
  assertError(await revokeAll(service, user.token, { id: bystander.user.id }), 403, 'FORBIDDEN');
  assertError(await revokeAll(service, user.apiKey, { id: bystander.user.id }), 403, 'FORBIDDEN');

  assert.is((await me(service, bearer(bystander.token))).status, 200);
  assert.is(await liveSessions(service, bystander.user.id), 1);
  const revokes = (await auditOf(service, admin.user.id)).filter((row) => row.event === 'admin.sessions_revoked');
  assert.not.ok(revokes.some((row) => row.data?.account === bystander.user.id), 'nothing recorded as done');
});

test('resetMfa: the owner who lost every factor signs in with the password again; audited, mailed; admins only', async ({ service, admin, user }) => {
  const owner = await registerAndVerify(service, 'lost.factor@example.com');
  const auth = callerOf(service, { bearer: owner.token }).auth;
  const { secret } = await auth.setupTotp({ password: owner.password });
  await auth.enableTotp({ code: totpCodeAt(secret, service.clock.now()) });
  assertError(await login(service, owner.email, owner.password), 403, 'MFA_REQUIRED');
  assert.is((await find(service, admin.token, { email: owner.email })).body.account.mfa, true);

  assertError(await resetMfa(service, user.token, { id: owner.user.id }), 403, 'FORBIDDEN');
  assertError(await resetMfa(service, admin.token, { id: 2147483000 }), 404, 'NOT_FOUND');
  assertError(await resetMfa(service, admin.token, { id: 'abc' }), 400, 'VALIDATION_FAILED');
  assertError(await resetMfa(service, admin.token, { id: owner.user.id, everything: true }), 400, 'VALIDATION_FAILED');
  assertError(await login(service, owner.email, owner.password), 403, 'MFA_REQUIRED');

  const seen = service.smtp.mailsTo(owner.email).length;
  const done = await resetMfa(service, admin.token, { id: owner.user.id });
  assert.is(done.status, 200, done.text);
  assert.equal(done.body, { success: true });
  await nextMail(service, owner.email, seen, /administrator turned off your second factor/);
  assert.is((await login(service, owner.email, owner.password)).status, 200, 'the password alone signs in');
  assert.is((await find(service, admin.token, { email: owner.email })).body.account.mfa, false);
  const ownerLog = (await auditOf(service, owner.user.id)).filter((row) => row.event === 'mfa.disabled');
  assert.equal(ownerLog.map((row) => row.data), [{ by: 'admin', totp: true, passkeys: 0 }]);
  assert.ok((await auditOf(service, admin.user.id)).some((row) => row.event === 'admin.mfa_reset' && row.data?.account === owner.user.id));

  // Nothing is left to remove: the owner's log has no second entry, and no second notice is sent.
  assert.equal((await resetMfa(service, admin.token, { id: owner.user.id })).body, { success: true });
  assert.equal((await auditOf(service, owner.user.id)).filter((row) => row.event === 'mfa.disabled').length, 1);
});

test.run();
