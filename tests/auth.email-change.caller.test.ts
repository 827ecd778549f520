import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PASSWORD, assertError, assertTokenStoredHashed, bearer, issuePaths, nextMail, registerAndVerify, tokenUsed } from './helpers/auth.ts';
import { CONFIRM_LINK, changeToken, emailOf } from './helpers/accounts.ts';
import { activityEvents as events, answerOf, callerOf, callerWith, loginCall as login, meCall as me } from './helpers/caller.ts';
import { startTestApp, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';

// docs/API.md, Account lifecycle (E-mail change): the rules of auth.changeEmail and
// auth.confirmEmailChange, called in process. What HTTP adds (credentials in headers, the
// mailed link's page and its form, an answer alike to the byte whether the address is taken)
// is tested over REST in tests/auth.email-change.rest.test.ts.

const test = suite<{ service: TestService }>('auth.changeEmail and auth.confirmEmailChange: moving an account to a new address');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const HOUR = 3600_000;
const MINUTE = 60_000;

type Headers = { authorization?: string; cookie?: string };
/** Any input, as a client that ignores the types would send it. */
const changeEmail = (service: TestService, headers: Headers, input: unknown) => answerOf(callerWith(service, headers).auth.changeEmail(input as never));
const confirm = (service: TestService, token: unknown) => answerOf(callerOf(service).auth.confirmEmailChange({ token } as never));
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');


test('a wrong password: 401 INVALID_CREDENTIALS, no link, no notice, and login.failed is in the activity', async ({ service }) => {
  const account = await registerAndVerify(service, 'wrong.password@example.com');
  const target = 'wrong.password.target@example.com';
  const seenOld = service.smtp.mailsTo(account.email).length;
  assertError(await changeEmail(service, bearer(account.token), { new_email: target, password: 'not the password' }), 401, 'INVALID_CREDENTIALS');
  assert.is((await events(service, bearer(account.token)))[0], 'login.failed');

  const rows = await service.deps.db.query("SELECT 1 FROM email_tokens WHERE purpose = 'email_change' AND account_id = $1", [account.user.id]);
  assert.is(rows.length, 0, 'no token was issued');
  // A later mail has arrived; one sent earlier would have too.
  await registerAndVerify(service, 'wrong.password.sentinel@example.com');
  assert.is(service.smtp.mailsTo(target).length, 0);
  assert.is(service.smtp.mailsTo(account.email).length, seenOld);
});


test('a request mails {PUBLIC_URL}/confirm-email?token=… to the new address (stored hashed) and a notice naming it to the old one', async ({ service }) => {
  const account = await registerAndVerify(service, 'request.old@example.com');
  const newEmail = 'request.new@example.com';
  const seenOld = service.smtp.mailsTo(account.email).length;
  const result = await changeEmail(service, bearer(account.token), { new_email: newEmail, password: PASSWORD });
  assert.is(result.status, 200, result.text);
  assert.equal(Object.keys(result.body).sort(), ['message', 'success']);
  assert.is(result.body.success, true);

  const mail = await nextMail(service, newEmail, 0, CONFIRM_LINK);
  const link = new RegExp(`^${escapeRegExp(service.env.PUBLIC_URL)}/confirm-email\\?token=([A-Za-z0-9_-]+)$`, 'm').exec(mail.text);
  assert.ok(link, mail.text);
  const token = link[1];
  assert.is(Buffer.from(token, 'base64url').length, 32);
  assert.match(mail.html, `/confirm-email?token=${token}`);
  assert.not.match(mail.subject, token);

  const notice = await nextMail(service, account.email, seenOld, /change of your e-mail address/i);
  assert.match(notice.text, newEmail);
  assert.not.match(notice.text, CONFIRM_LINK);
  assert.not.match(notice.text, token);

  await assertTokenStoredHashed(service, account.user.id, 'email_change', token);
  assert.ok((await events(service, bearer(account.token))).includes('email.change_requested'), 'email.change_requested is in the activity');
});


test('until confirmation the account keeps working under the old address', async ({ service }) => {
  const account = await registerAndVerify(service, 'pending.old@example.com');
  const newEmail = 'pending.new@example.com';
  await changeToken(service, account, newEmail);
  assert.is((await login(service, account.email)).status, 200);
  assertError(await login(service, newEmail), 401, 'INVALID_CREDENTIALS');
  const shown = await me(service, bearer(account.token));
  assert.is(shown.status, 200);
  assert.is(shown.body.user.email, account.email);
  assert.is(await emailOf(service, account.user.id), account.email);
});


test('confirming moves the account: the new address logs in, the old one is 401, /me shows the new address, verified', async ({ service }) => {
  const account = await registerAndVerify(service, 'moving.old@example.com');
  const newEmail = 'moving.new@example.com';
  const token = await changeToken(service, account, newEmail);
  // Asked before, so cached answers would be there to go stale.
  assert.is((await me(service, bearer(account.token))).body.user.email, account.email);
  assert.is((await me(service, bearer(account.apiKey))).body.user.email, account.email);

  const result = await confirm(service, token);
  assert.is(result.status, 200, result.text);
  assert.equal(Object.keys(result.body).sort(), ['message', 'success']);
  assert.is(result.body.success, true);

  const loggedIn = await login(service, newEmail);
  assert.is(loggedIn.status, 200, loggedIn.text);
  assert.is(loggedIn.body.user.id, account.user.id);
  assert.is(loggedIn.body.user.email, newEmail);
  assert.is(loggedIn.body.user.email_verified, true);
  assert.is(loggedIn.body.user.api_key, account.apiKey);
  assertError(await login(service, account.email), 401, 'INVALID_CREDENTIALS');
  for (const credentials of [account.token, account.apiKey]) {
    const shown = await me(service, bearer(credentials));
    assert.is(shown.status, 200);
    assert.is(shown.body.user.email, newEmail);
    assert.is(shown.body.user.email_verified, true);
  }
  assert.ok((await events(service, bearer(account.token))).includes('email.changed'), 'email.changed is in the activity');
});


test('confirming voids the reset links mailed to the old address', async ({ service }) => {
  const account = await registerAndVerify(service, 'resetting.old@example.com');
  const changeLink = await changeToken(service, account, 'resetting.new@example.com');
  const seen = service.smtp.mailsTo(account.email).length;
  assert.is((await answerOf(callerOf(service).auth.forgotPassword({ email: account.email }))).status, 200);
  const resetToken = linkToken(await nextMail(service, account.email, seen, /\/reset-password\?token=/), '/reset-password');
  assert.is((await confirm(service, changeLink)).status, 200);
  assertError(await answerOf(callerOf(service).auth.resetPassword({ token: resetToken, password: 'a brand new passphrase' })), 400, 'INVALID_TOKEN');
  assert.is((await login(service, 'resetting.new@example.com', PASSWORD)).status, 200);
});


test('email.change_requested and email.changed appear in the activity, newest first', async ({ service }) => {
  const account = await registerAndVerify(service, 'activity.old@example.com');
  const token = await changeToken(service, account, 'activity.new@example.com');
  assert.is((await events(service, bearer(account.token)))[0], 'email.change_requested');
  assert.is((await confirm(service, token)).status, 200);
  const recorded = await events(service, bearer(account.apiKey));
  assert.equal(recorded.slice(0, 2), ['email.changed', 'email.change_requested']);
});


test('the token works once: a second use is 400 INVALID_TOKEN', async ({ service }) => {
  const account = await registerAndVerify(service, 'once.old@example.com');
  const token = await changeToken(service, account, 'once.new@example.com');
  assert.is((await confirm(service, token)).status, 200);
  assertError(await confirm(service, token), 400, 'INVALID_TOKEN');
  assert.is(await emailOf(service, account.user.id), 'once.new@example.com');
});


test('concurrent confirmations of one token apply once', async ({ service }) => {
  const account = await registerAndVerify(service, 'race.old@example.com');
  const token = await changeToken(service, account, 'race.new@example.com');
  const results = await Promise.all([0, 1, 2, 3, 4].map(() => confirm(service, token)));
  assert.equal(results.map((result) => result.status).sort(), [200, 400, 400, 400, 400]);
  const changed = await service.deps.db.query("SELECT 1 FROM audit_events WHERE account_id = $1 AND event = 'email.changed'", [account.user.id]);
  assert.is(changed.length, 1);
});


test('an unknown token, or a token mailed for something else, is 400 INVALID_TOKEN; a malformed one 400 VALIDATION_FAILED', async ({ service }) => {
  assertError(await confirm(service, Buffer.alloc(32, 5).toString('base64url')), 400, 'INVALID_TOKEN');
  const account = await registerAndVerify(service, 'purpose.old@example.com');
  const seen = service.smtp.mailsTo(account.email).length;
  assert.is((await answerOf(callerOf(service).auth.forgotPassword({ email: account.email }))).status, 200);
  const resetToken = linkToken(await nextMail(service, account.email, seen, /\/reset-password\?token=/), '/reset-password');
  assertError(await confirm(service, resetToken), 400, 'INVALID_TOKEN');
  assert.is(await tokenUsed(service, resetToken), false, 'the reset link still works');

  for (const bad of ['', 42, 't'.repeat(5000), undefined]) {
    const result = await confirm(service, bad);
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(result), ['token'], `for ${JSON.stringify(bad)}`);
  }
});


test('a newer request voids the older link', async ({ service }) => {
  const account = await registerAndVerify(service, 'renewed.old@example.com');
  const older = await changeToken(service, account, 'renewed.first@example.com');
  const newer = await changeToken(service, account, 'renewed.second@example.com');
  assertError(await confirm(service, older), 400, 'INVALID_TOKEN');
  assert.is(await emailOf(service, account.user.id), account.email);
  assert.is((await confirm(service, newer)).status, 200);
  assert.is(await emailOf(service, account.user.id), 'renewed.second@example.com');
});


test('whether the new address is taken cannot be told from what happens to an earlier link', async ({ service }) => {
  // An account may ask for a move to a mailbox it controls, then to the address it wants to
  // probe. The answer is the same for a taken and a free address, so the earlier link must
  // end the same way too; otherwise confirming it says whether the probed address is taken.
  await registerAndVerify(service, 'probed.taken@example.com');
  const outcomes: number[] = [];
  for (const [name, probed] of [['prober.one', 'probed.taken@example.com'], ['prober.two', 'probed.free@example.com']]) {
    const prober = await registerAndVerify(service, `${name}@example.com`);
    const earlier = await changeToken(service, prober, `${name}.mailbox@example.com`);
    const probe = await changeEmail(service, bearer(prober.token), { new_email: probed, password: PASSWORD });
    assert.is(probe.status, 200, probe.text);
    outcomes.push((await confirm(service, earlier)).status);
  }
  assert.is(outcomes[1], 400, 'a request to a free address voids the earlier link');
  assert.is(outcomes[0], outcomes[1], `earlier link after a probe of a taken address: ${outcomes[0]}, of a free one: ${outcomes[1]}`);
});


test('the new address is lower-cased and trimmed, as at registration', async ({ service }) => {
  const account = await registerAndVerify(service, 'case.old@example.com');
  const result = await changeEmail(service, bearer(account.token), { new_email: '  Case.NEW@Example.COM ', password: PASSWORD });
  assert.is(result.status, 200, result.text);
  const mail = await nextMail(service, 'case.new@example.com', 0, CONFIRM_LINK);
  assert.equal(mail.envelopeTo, ['case.new@example.com']);
  assert.is((await confirm(service, linkToken(mail, '/confirm-email'))).status, 200);
  assert.is(await emailOf(service, account.user.id), 'case.new@example.com');
  assert.is((await login(service, 'Case.New@example.com')).status, 200);
});


test('a new address that is not a bare address (display name, no @, 255 chars, a NUL) is 400 VALIDATION_FAILED naming new_email', async ({ service }) => {
  const account = await registerAndVerify(service, 'invalid.old@example.com');
  const address = (length: number) => `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(length - 201)}.example`;
  const long = address(255);
  assert.is(long.length, 255);
  const bad: unknown[] = ['Name <a@b.example>', 'no-at-sign.example.com', long, 'nul\u0000@example.com', 'a@b.example, c@d.example', '', 42, undefined];
  for (const newEmail of bad) {
    const result = await changeEmail(service, bearer(account.token), { new_email: newEmail, password: PASSWORD });
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(result), ['new_email'], `for ${JSON.stringify(newEmail)}`);
  }
  const noPassword = await changeEmail(service, bearer(account.token), { new_email: 'invalid.new@example.com' });
  assertError(noPassword, 400, 'VALIDATION_FAILED');
  assert.equal(issuePaths(noPassword), ['password']);
  const rows = await service.deps.db.query("SELECT 1 FROM email_tokens WHERE purpose = 'email_change' AND account_id = $1", [account.user.id]);
  assert.is(rows.length, 0, 'no link was issued');

  const longest = address(254);
  assert.is(longest.length, 254);
  assert.is((await changeEmail(service, bearer(account.token), { new_email: longest, password: PASSWORD })).status, 200, '254 characters are allowed');
  // (The test SMTP server refuses an address this long, so the link is looked for in the table.)
  const issued = await service.deps.db.query("SELECT 1 FROM email_tokens WHERE purpose = 'email_change' AND new_email = $1", [longest]);
  assert.is(issued.length, 1);
});


test('an address registered by someone else between request and confirmation: confirm is 400 INVALID_TOKEN and nothing moves', async ({ service }) => {
  const account = await registerAndVerify(service, 'squeezed.old@example.com');
  const newEmail = 'squeezed.new@example.com';
  const token = await changeToken(service, account, newEmail);
  const registered = await callerOf(service).auth.register({ email: newEmail, password: 'the newcomer password', name: 'Late Arrival' });
  assert.is(registered.success, true);
  const [newcomer] = await service.deps.db.query<{ id: number }>('SELECT id FROM accounts WHERE email = $1', [newEmail]);
  assert.ok(newcomer && newcomer.id !== account.user.id);

  assertError(await confirm(service, token), 400, 'INVALID_TOKEN');
  assert.is(await emailOf(service, account.user.id), account.email);
  assert.is(await emailOf(service, newcomer.id), newEmail);
  assert.is((await login(service, account.email)).status, 200);
  assert.is((await me(service, bearer(account.token))).body.user.email, account.email);
  assert.not.ok((await events(service, bearer(account.token))).includes('email.changed'));
});


test('two accounts asking for the same free address: the first to confirm gets it, the other link is 400 INVALID_TOKEN', async ({ service }) => {
  const first = await registerAndVerify(service, 'first.asker@example.com');
  const second = await registerAndVerify(service, 'second.asker@example.com');
  const wanted = 'wanted@example.com';
  const firstToken = await changeToken(service, first, wanted);
  const secondToken = await changeToken(service, second, wanted);
  assert.is((await confirm(service, secondToken)).status, 200);
  assertError(await confirm(service, firstToken), 400, 'INVALID_TOKEN');
  assert.is(await emailOf(service, second.user.id), wanted);
  assert.is(await emailOf(service, first.user.id), first.email);
});


test('the link still works at 23 h 59 min and is dead after 24 hours on the test clock', async ({ service }) => {
  const early = await registerAndVerify(service, 'early.old@example.com');
  const late = await registerAndVerify(service, 'late.old@example.com');
  const earlyToken = await changeToken(service, early, 'early.new@example.com');
  const lateToken = await changeToken(service, late, 'late.new@example.com');

  service.clock.advance(24 * HOUR - MINUTE);
  assert.is((await confirm(service, earlyToken)).status, 200);
  assert.is(await emailOf(service, early.user.id), 'early.new@example.com');

  service.clock.advance(2 * MINUTE);
  assertError(await confirm(service, lateToken), 400, 'INVALID_TOKEN');
  assert.is(await emailOf(service, late.user.id), late.email);
  assert.is((await login(service, late.email)).status, 200);
});


test('no mail subject in this suite carries a token or a password', async ({ service }) => {
  // Its own links (verification, e-mail change), besides whatever the other tests had mailed.
  const account = await registerAndVerify(service, 'subjects.old@example.com');
  assert.is((await changeEmail(service, bearer(account.token), { new_email: 'subjects.new@example.com', password: PASSWORD })).status, 200);
  await nextMail(service, 'subjects.new@example.com', 0, CONFIRM_LINK);
  const mails = service.smtp.inbox;
  const tokens = mails.flatMap((mail) => [...mail.text.matchAll(/token=([A-Za-z0-9_-]+)/g)].map((match) => match[1]));
  assert.ok(tokens.length >= 2, 'links were mailed');
  for (const mail of mails) {
    assert.not.match(mail.subject, /[A-Za-z0-9_-]{32,}/, mail.subject);
    for (const secret of [...tokens, PASSWORD]) assert.not.ok(mail.subject.includes(secret), mail.subject);
  }
});


test.run();
