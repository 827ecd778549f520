import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, bearer, login, nextMail, registerAndVerify, type Account } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';
import { data, trpcOver } from './helpers/trpc-http.ts';

// A password phished, an e-mail change asked for with it, the owner taking the account back:
// every way the owner does that kills the links the intruder asked for, and the owner sees
// (and can cancel) a change that waits for its link.

const test = suite<{ service: TestService }>('pending e-mail change and reset links do not outlive the owner taking the account back');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const CONFIRM_LINK = /\/confirm-email\?token=/;
const RESET_LINK = /\/reset-password\?token=/;
const NEW_PASSWORD = 'a brand new password, long';

const post = (service: TestService, path: string, headers: Record<string, string>, json?: unknown) =>
  request(service.url, 'POST', `${AUTH}/${path}`, { headers: { 'content-type': 'application/json', ...headers }, json });
const pending = async (service: TestService, account: Account) => {
  const result = await request(service.url, 'GET', `${AUTH}/email/pending`, { headers: bearer(account.token) });
  assert.is(result.status, 200, result.text);
  return result.body.pending;
};
const emailOf = async (service: TestService, accountId: number) =>
  (await service.deps.db.query<{ email: string }>('SELECT email FROM accounts WHERE id = $1', [accountId]))[0]?.email;

/** The intruder, with the phished password and a session of its own, asks to move the account to its address. */
async function intruderAsksForChange(service: TestService, owner: Account, to: string): Promise<string> {
  const intruder = await login(service, owner.email, owner.password);
  assert.is(intruder.status, 200, intruder.text);
  const seen = service.smtp.mailsTo(to).length;
  const asked = await post(service, 'email/change', bearer(intruder.body.token), { new_email: to, password: owner.password });
  assert.is(asked.status, 200, asked.text);
  return linkToken(await nextMail(service, to, seen, CONFIRM_LINK), '/confirm-email');
}

/** A reset link mailed to the account's address (by the intruder's request, say). */
async function resetLinkOf(service: TestService, account: Account): Promise<string> {
  const seen = service.smtp.mailsTo(account.email).length;
  assert.is((await post(service, 'password/forgot', {}, { email: account.email })).status, 200);
  return linkToken(await nextMail(service, account.email, seen, RESET_LINK), '/reset-password');
}

async function assertLinksDead(service: TestService, owner: Account, changeToken: string, resetToken: string, intruderAddress: string) {
  assertError(await post(service, 'email/confirm', {}, { token: changeToken }), 400, 'INVALID_TOKEN');
  assertError(await post(service, 'password/reset', {}, { token: resetToken, password: 'the intruder password' }), 400, 'INVALID_TOKEN');
  assert.is(await emailOf(service, owner.user.id), owner.email, 'the account kept its address');
  assert.is((await login(service, intruderAddress, 'the intruder password')).status, 401);
}

test('the reported takeover: a password change voids the intruder’s e-mail change link and reset link', async ({ service }) => {
  const owner = await registerAndVerify(service, 'phished.owner@example.com');
  const changeToken = await intruderAsksForChange(service, owner, 'intruder.one@example.net');
  const resetToken = await resetLinkOf(service, owner);

  const changed = await post(service, 'password/change', bearer(owner.token), { current_password: PASSWORD, new_password: NEW_PASSWORD });
  assert.is(changed.status, 200, changed.text);
  assert.is(await pending(service, owner), null, 'the account page no longer shows a pending change');
  await assertLinksDead(service, owner, changeToken, resetToken, 'intruder.one@example.net');
  assert.is((await login(service, owner.email, NEW_PASSWORD)).status, 200);
});

test('"sign out everywhere" alone voids both links too, and so does a reset', async ({ service }) => {
  const owner = await registerAndVerify(service, 'signout.owner@example.com');
  const changeToken = await intruderAsksForChange(service, owner, 'intruder.two@example.net');
  const resetToken = await resetLinkOf(service, owner);
  const revoked = await post(service, 'sessions/revoke-all', bearer(owner.token), {});
  assert.is(revoked.status, 200, revoked.text);
  assert.is(revoked.body.revoked, 1, 'the intruder’s session ended');
  await assertLinksDead(service, owner, changeToken, resetToken, 'intruder.two@example.net');

  const other = await registerAndVerify(service, 'reset.owner@example.com');
  const otherChange = await intruderAsksForChange(service, other, 'intruder.three@example.net');
  const ownReset = await resetLinkOf(service, other);
  assert.is((await post(service, 'password/reset', {}, { token: ownReset, password: NEW_PASSWORD })).status, 200);
  assertError(await post(service, 'email/confirm', {}, { token: otherChange }), 400, 'INVALID_TOKEN');
  assert.is(await emailOf(service, other.user.id), other.email);
});

test('over tRPC as well: auth.changePassword voids the pending change', async ({ service }) => {
  const owner = await registerAndVerify(service, 'trpc.owner@example.com');
  const changeToken = await intruderAsksForChange(service, owner, 'intruder.four@example.net');
  const changed = await trpcOver(service).mutation(owner, 'auth.changePassword', { current_password: PASSWORD, new_password: NEW_PASSWORD });
  assert.is(changed.status, 200, changed.text);
  assertError(await post(service, 'email/confirm', {}, { token: changeToken }), 400, 'INVALID_TOKEN');
});

test('a pending change is shown (address, since, until) and POST /email/cancel voids it, with the activity saying so', async ({ service }) => {
  const owner = await registerAndVerify(service, 'cancel.owner@example.com');
  assert.is(await pending(service, owner), null);
  const changeToken = await intruderAsksForChange(service, owner, 'intruder.five@example.net');
  const shown = await pending(service, owner);
  assert.is(shown.new_email, 'intruder.five@example.net');
  assert.is(new Date(shown.expires_at).getTime() - new Date(shown.requested_at).getTime(), 24 * 3600_000);

  const cancelled = await post(service, 'email/cancel', bearer(owner.token));
  assert.is(cancelled.status, 200, cancelled.text);
  assert.is(cancelled.body.success, true);
  assert.match(cancelled.body.message, /cancelled/);
  assert.is(await pending(service, owner), null);
  assertError(await post(service, 'email/confirm', {}, { token: changeToken }), 400, 'INVALID_TOKEN');

  const again = await post(service, 'email/cancel', bearer(owner.token), {});
  assert.is(again.status, 200, 'nothing pending is no error');
  const activity = await request(service.url, 'GET', `${AUTH}/activity`, { headers: bearer(owner.token) });
  const events = activity.body.items.map((item: { event: string }) => item.event);
  assert.is(events.filter((event: string) => event === 'email.change_cancelled').length, 1, 'the empty cancel is not an event');
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

test('a confirmed change mails a notice to the old address, naming the new one', async ({ service }) => {
  const owner = await registerAndVerify(service, 'moving.owner@example.com', { name: 'Moving Owner' });
  const seenOld = service.smtp.mailsTo(owner.email).length;
  const seenNew = service.smtp.mailsTo('moved.owner@example.com').length;
  assert.is((await post(service, 'email/change', bearer(owner.token), { new_email: 'moved.owner@example.com', password: PASSWORD })).status, 200);
  const token = linkToken(await nextMail(service, 'moved.owner@example.com', seenNew, CONFIRM_LINK), '/confirm-email');
  assert.is((await post(service, 'email/confirm', {}, { token })).status, 200);
  const notice = await nextMail(service, owner.email, seenOld, /was changed/);
  assert.match(notice.subject, 'e-mail address was changed');
  assert.match(notice.text, 'moved.owner@example.com');
  assert.match(notice.text, 'Moving Owner');
  assert.not.match(notice.text, /token=/);
});

test.run();
