import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, bearer, login, me, nextMail, register, registerAdmin, registerAndVerify, registerForToken, type Account } from './helpers/auth.ts';
import { createBrowser, signInWith, startServiceWithProviders, type WithProviders } from './helpers/identity-providers.ts';
import { request, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';

// ADMIN_EMAILS (docs/CONFIGURATION.md): the first admin without a CLI step. A listed address
// makes its account an admin when a link of this service's own verifies it (a registration's
// confirmation, an e-mail change's), in that link's transaction; never an identity
// provider's word, never a password reset; once per address.

const LISTED = ['first.admin@example.com', 'via.provider@example.com', 'claimed@example.com', 'once@example.com', 'moved.here@example.com', 'reset.only@example.com'];

const test = suite<{ env: WithProviders }>('REST ADMIN_EMAILS: the first admin by its own verified address');

test.before(async (context) => {
  // Listed in another case and spacing, as an operator may type them.
  context.env = await startServiceWithProviders({ ADMIN_EMAILS: LISTED.map((email, index) => (index === 0 ? ` First.Admin@EXAMPLE.com ` : email)).join(',') });
});
test.after(async ({ env }) => {
  await env?.close();
});

type ActivityRow = { event: string; data: Record<string, unknown> | null; ip: string | null };
const activityOf = (service: TestService, accountId: number) =>
  service.deps.db.query<ActivityRow>('SELECT event, data, ip FROM audit_events WHERE account_id = $1 ORDER BY id', [accountId]);
const roleOf = async (service: TestService, token: string) => (await me(service, bearer(token))).body.user.role;
/** The service's log lines written by ADMIN_EMAILS. */
const promotionLines = (service: TestService) => service.logs.lines.map((line) => JSON.parse(line)).filter((line) => line.by === 'ADMIN_EMAILS');
const overview = (service: TestService, token: string) => request(service.url, 'GET', '/api/v1/admin/overview', { headers: bearer(token) });

/** Moves `account` to `newEmail` through the change's mailed link. */
async function changeEmail(service: TestService, account: Account, newEmail: string): Promise<void> {
  const seen = service.smtp.mailsTo(newEmail).length;
  const asked = await request(service.url, 'POST', `${AUTH}/email/change`, { json: { new_email: newEmail, password: PASSWORD }, headers: bearer(account.token) });
  assert.is(asked.status, 200, asked.text);
  const token = linkToken(await nextMail(service, newEmail, seen, /confirm-email\?token=/), '/confirm-email');
  const confirmed = await request(service.url, 'POST', `${AUTH}/email/confirm`, { json: { token } });
  assert.is(confirmed.status, 200, confirmed.text);
}

test('a listed address confirmed by its registration link is an admin at once: /me says so, and the log and the activity log tell', async ({ env: { service } }) => {
  const seen = service.smtp.mailsTo('first.admin@example.com').length;
  assert.is((await register(service, { email: 'First.Admin@Example.com', password: PASSWORD, name: 'First Admin' })).status, 201);
  const token = linkToken(await nextMail(service, 'first.admin@example.com', seen));
  const loggedBefore = promotionLines(service).length;
  const verified = await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token } });
  assert.is(verified.status, 200, verified.text);
  const session = await login(service, 'first.admin@example.com');
  assert.is(session.body.user.role, 'admin', 'the login right after the link');
  assert.is(await roleOf(service, session.body.token), 'admin');
  assert.is((await overview(service, session.body.token)).status, 200, 'the admin API lets it in');

  const id = session.body.user.id;
  const promoted = (await activityOf(service, id)).filter((row) => row.event === 'account.promoted');
  assert.equal(promoted.map((row) => row.data), [{ role: 'admin', by: 'ADMIN_EMAILS' }]);
  const logged = promotionLines(service);
  assert.is(logged.length, loggedBefore + 1);
  assert.is(logged[logged.length - 1].account, id);
  assert.match(String(logged[logged.length - 1].msg), 'ADMIN_EMAILS made an account an admin');

  // An address not listed stays a user, by the same link.
  const other = await registerAndVerify(service, 'not.listed@example.com');
  assert.is(other.user.role, 'user');
});

test("an identity provider's word never promotes: not a new account it makes, not a registered one a trusted provider claims", async ({ env: { service, op } }) => {
  op.people.set('sub-listed', { email: 'Via.Provider@example.com', email_verified: true, name: 'Via Provider' });
  const browser = createBrowser();
  assert.is((await signInWith(service, browser, 'acme', 'sub-listed')).status, 302);
  const made = await me(service, bearer(browser.cookie(service.url, 'svc_token')!));
  assert.equal([made.body.user.email, made.body.user.email_verified, made.body.user.role], ['via.provider@example.com', true, 'user']);

  // Registered, never confirmed, then claimed through `corp`, which is trusted for e-mail.
  await registerForToken(service, 'claimed@example.com');
  op.people.set('sub-claimer', { email: 'claimed@example.com', email_verified: true, name: 'Claimer' });
  const claimer = createBrowser();
  assert.is((await signInWith(service, claimer, 'corp', 'sub-claimer')).status, 302);
  const claimed = await me(service, bearer(claimer.cookie(service.url, 'svc_token')!));
  assert.equal([claimed.body.user.email, claimed.body.user.email_verified, claimed.body.user.role], ['claimed@example.com', true, 'user']);
  for (const id of [made.body.user.id, claimed.body.user.id]) {
    assert.equal((await activityOf(service, id)).filter((row) => row.event === 'account.promoted'), []);
  }
});

test('an e-mail change confirmed to a listed address promotes, seen at once by a session it already had', async ({ env: { service } }) => {
  const mover = await registerAndVerify(service, 'mover@example.com');
  assert.is(mover.user.role, 'user');
  await changeEmail(service, mover, 'moved.here@example.com');
  const shown = (await me(service, bearer(mover.token))).body.user;
  assert.equal([shown.email, shown.role], ['moved.here@example.com', 'admin']);
  assert.is((await overview(service, mover.token)).status, 200);
});

test('once per address: a demotion stands through an e-mail change back to it, and a new account with it after the first is deleted', async ({ env: { service } }) => {
  const other = await registerAdmin(service, 'other.admin@example.com');
  const once = await registerAndVerify(service, 'once@example.com');
  assert.is(once.user.role, 'admin');
  const demoted = await request(service.url, 'POST', `/api/v1/admin/accounts/${once.user.id}/role`, { json: { role: 'user' }, headers: bearer(other.token) });
  assert.is(demoted.status, 200, demoted.text);
  assert.is(await roleOf(service, once.token), 'user');

  // Verified again, through a link of ours, at the listed address: still a user.
  await changeEmail(service, once, 'once.elsewhere@example.com');
  await changeEmail(service, once, 'once@example.com');
  assert.equal([(await me(service, bearer(once.token))).body.user.email, await roleOf(service, once.token)], ['once@example.com', 'user']);

  // The account goes; whoever registers the address next is not promoted either.
  const deleted = await request(service.url, 'POST', `${AUTH}/account/delete`, { json: { password: PASSWORD }, headers: bearer(once.token) });
  assert.is(deleted.status, 200, deleted.text);
  const seen = service.smtp.mailsTo('once@example.com').length;
  assert.is((await register(service, { email: 'once@example.com', password: PASSWORD, name: 'Once Again' })).status, 201);
  const token = linkToken(await nextMail(service, 'once@example.com', seen, /verify-email\?token=/));
  assert.is((await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token } })).status, 200);
  const again = await login(service, 'once@example.com');
  assert.is(again.body.user.role, 'user');
  assert.equal((await activityOf(service, again.body.user.id)).filter((row) => row.event === 'account.promoted'), []);
});

test('a password reset link, which also confirms a never-confirmed address, does not promote', async ({ env: { service } }) => {
  await registerForToken(service, 'reset.only@example.com');
  const seen = service.smtp.mailsTo('reset.only@example.com').length;
  assert.is((await request(service.url, 'POST', `${AUTH}/password/forgot`, { json: { email: 'reset.only@example.com' } })).status, 200);
  const token = linkToken(await nextMail(service, 'reset.only@example.com', seen, /reset-password\?token=/), '/reset-password');
  const reset = await request(service.url, 'POST', `${AUTH}/password/reset`, { json: { token, password: 'a brand new passphrase' } });
  assert.is(reset.status, 200, reset.text);
  const session = await login(service, 'reset.only@example.com', 'a brand new passphrase');
  assert.equal([session.body.user.email_verified, session.body.user.role], [true, 'user']);
});

test.run();
