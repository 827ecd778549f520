import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PASSWORD, assertError, bearer, nextMail, registerAndVerify, type Account } from './helpers/auth.ts';
import { changeToken, emailOf, intruderAsksForChange, resetToken } from './helpers/accounts.ts';
import { activityEvents, answerOf, callerOf, loginCall as login } from './helpers/caller.ts';
import { startTestApp, type TestService } from './helpers/service.ts';

// A password phished, an e-mail change asked for with it, the owner taking the account back:
// every way the owner does that kills the links the intruder asked for, and the owner sees
// (and can cancel) a change that waits for its link. The procedures called in process; the
// same over tRPC, and what HTTP adds (credentials, bodies no client sends, a cookie from
// another site), in tests/auth.takeover-links.rest.test.ts.

const test = suite<{ service: TestService }>('pending e-mail change and reset links do not outlive the owner taking the account back');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const NEW_PASSWORD = 'a brand new password, long';

/** The account's procedures as the holder of `credential`. */
const as = (service: TestService, credential: string) => callerOf(service, { bearer: credential }).auth;
const confirm = (service: TestService, token: string) => answerOf(callerOf(service).auth.confirmEmailChange({ token }));
const pending = async (service: TestService, account: Account) => (await as(service, account.token).pendingEmailChange()).pending;

async function assertLinksDead(service: TestService, owner: Account, changeLink: string, resetLink: string, intruderAddress: string) {
  assertError(await confirm(service, changeLink), 400, 'INVALID_TOKEN');
  assertError(await answerOf(callerOf(service).auth.resetPassword({ token: resetLink, password: 'the intruder password' })), 400, 'INVALID_TOKEN');
  assert.is(await emailOf(service, owner.user.id), owner.email, 'the account kept its address');
  assert.is((await login(service, intruderAddress, 'the intruder password')).status, 401);
}

test('the reported takeover: a password change voids the intruder’s e-mail change link and reset link', async ({ service }) => {
  const owner = await registerAndVerify(service, 'phished.owner@example.com');
  const changeLink = await intruderAsksForChange(service, owner, 'intruder.one@example.net');
  const resetLink = await resetToken(service, owner.email);

  const changed = await answerOf(as(service, owner.token).changePassword({ current_password: PASSWORD, new_password: NEW_PASSWORD }));
  assert.is(changed.status, 200, changed.text);
  assert.is(await pending(service, owner), null, 'the account page no longer shows a pending change');
  await assertLinksDead(service, owner, changeLink, resetLink, 'intruder.one@example.net');
  assert.is((await login(service, owner.email, NEW_PASSWORD)).status, 200);
});

test('"sign out everywhere" alone voids both links too, and so does a reset', async ({ service }) => {
  const owner = await registerAndVerify(service, 'signout.owner@example.com');
  const changeLink = await intruderAsksForChange(service, owner, 'intruder.two@example.net');
  const resetLink = await resetToken(service, owner.email);
  const revoked = await answerOf(as(service, owner.token).revokeAllSessions({}));
  assert.is(revoked.status, 200, revoked.text);
  assert.is(revoked.body.revoked, 1, 'the intruder’s session ended');
  await assertLinksDead(service, owner, changeLink, resetLink, 'intruder.two@example.net');

  const other = await registerAndVerify(service, 'reset.owner@example.com');
  const otherChange = await intruderAsksForChange(service, other, 'intruder.three@example.net');
  const ownReset = await resetToken(service, other.email);
  assert.is((await answerOf(callerOf(service).auth.resetPassword({ token: ownReset, password: NEW_PASSWORD }))).status, 200);
  assertError(await confirm(service, otherChange), 400, 'INVALID_TOKEN');
  assert.is(await emailOf(service, other.user.id), other.email);
});

test('a pending change is shown (address, since, until) and cancelling voids it, with the activity saying so', async ({ service }) => {
  const owner = await registerAndVerify(service, 'cancel.owner@example.com');
  assert.is(await pending(service, owner), null);
  const changeLink = await intruderAsksForChange(service, owner, 'intruder.five@example.net');
  const shown = await pending(service, owner);
  assert.ok(shown, 'a change is pending');
  assert.is(shown.new_email, 'intruder.five@example.net');
  assert.is(new Date(shown.expires_at).getTime() - new Date(shown.requested_at).getTime(), 24 * 3600_000);

  const cancelled = await answerOf(as(service, owner.token).cancelEmailChange());
  assert.is(cancelled.status, 200, cancelled.text);
  assert.is(cancelled.body.success, true);
  assert.match(cancelled.body.message, /cancelled/);
  assert.is(await pending(service, owner), null);
  assertError(await confirm(service, changeLink), 400, 'INVALID_TOKEN');

  const again = await answerOf(as(service, owner.token).cancelEmailChange());
  assert.is(again.status, 200, 'nothing pending is no error');
  const events = await activityEvents(service, bearer(owner.token));
  assert.is(events.filter((event: string) => event === 'email.change_cancelled').length, 1, 'the empty cancel is not an event');
});

test('a confirmed change mails a notice to the old address, naming the new one', async ({ service }) => {
  const owner = await registerAndVerify(service, 'moving.owner@example.com', { name: 'Moving Owner' });
  const seenOld = service.smtp.mailsTo(owner.email).length;
  const token = await changeToken(service, owner, 'moved.owner@example.com');
  assert.is((await confirm(service, token)).status, 200);
  const notice = await nextMail(service, owner.email, seenOld, /was changed/);
  assert.match(notice.subject, 'e-mail address was changed');
  assert.match(notice.text, 'moved.owner@example.com');
  assert.match(notice.text, 'Moving Owner');
  assert.not.match(notice.text, /token=/);
});

test.run();
