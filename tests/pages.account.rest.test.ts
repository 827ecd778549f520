import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, bearer, login, me, nextMail, registerAndVerify, type Account } from './helpers/auth.ts';
import { assertPageHeaders, inputValue, signedInVisitor, type Visitor } from './helpers/pages.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';

// docs/API.md, Pages: GET /account and everything it posts to: each through the same
// procedure the REST route calls, checked here by its effect through REST.

const test = suite<{ service: TestService; secrets: Set<string> }>('pages: the account page');

test.before(async (context) => {
  context.service = await startTestApp();
  context.secrets = new Set([PASSWORD, NEW_PASSWORD, 'not it at all']);
});
test.after(async ({ service }) => {
  await service?.close();
});

const NEW_PASSWORD = 'an entirely new password';

/** Every key and session token made here, for the log check at the end. */
const made = new Set<string>();

async function accountWithVisitor(service: TestService, email: string): Promise<{ account: Account; visitor: Visitor }> {
  const account = await registerAndVerify(service, email, { name: 'Grace Hopper', company: 'Navy' });
  const visitor = await signedInVisitor(service, account.email, account.password);
  made.add(account.apiKey).add(account.token).add(visitor.cookies.get('svc_token')!);
  const page = await visitor.get('/account');
  assert.is(page.status, 200, page.text);
  return { account, visitor };
}

const sessionIdOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid as string;

test('without a cookie, or with one whose session ended: 303 to /login?next=/account (and the dead cookie is cleared)', async ({ service }) => {
  const anonymous = await request(service.url, 'GET', '/account');
  assert.is(anonymous.status, 303);
  assert.is(anonymous.headers.get('location'), '/login?next=/account');
  assert.equal(anonymous.headers.getSetCookie(), []);
  for (const cookie of ['svc_token=garbage', 'svc_token=a.b.c']) {
    const answer = await request(service.url, 'GET', '/account', { headers: { cookie } });
    assert.is(answer.headers.get('location'), '/login?next=/account');
    assert.ok(answer.headers.getSetCookie().some((line) => line.startsWith('svc_token=; ')));
  }
  // A Bearer header is not a page's credential: pages read the cookie only.
  const account = await registerAndVerify(service, 'page.bearer@example.com');
  assert.is((await request(service.url, 'GET', '/account', { headers: bearer(account.apiKey) })).status, 303);
});

test('the page shows name, e-mail, plan, role, sessions and activity, with the key hidden', async ({ service }) => {
  const { account, visitor } = await accountWithVisitor(service, 'page.show@example.com');
  const page = await visitor.get('/account');
  assertPageHeaders(page);
  for (const text of ['Grace Hopper', account.email, 'Navy', '<span class="badge badge-accent">free</span>', '<dd>user</dd>', 'Verified', 'This device', 'Signed in', 'Account created']) {
    assert.match(page.text, text);
  }
  assert.not.match(page.text, account.apiKey);
  assert.not.match(page.text, visitor.cookies.get('svc_token')!);
  assert.match(page.text, '<form method="post" action="/account/api-key">');
  assert.match(page.text, '<form method="post" action="/logout">');
});

test('profile: the form shows name and company; a change saves both (emptied company: none) and /me shows it', async ({ service }) => {
  const { account, visitor } = await accountWithVisitor(service, 'page.profile@example.com');
  const page = await visitor.get('/account');
  assert.match(page.text, '<form method="post" action="/account/profile">');
  assert.match(page.text, '<label for="profile-name">Name</label>');
  assert.match(page.text, '<label for="profile-company">Company</label>');
  assert.is(inputValue(page.text, 'name'), 'Grace Hopper');
  assert.is(inputValue(page.text, 'company'), 'Navy');

  const saved = await visitor.post('/account/profile', { name: '  Grace Brewster Hopper ', company: 'US Navy' });
  assert.is(saved.status, 303, saved.text);
  assert.is(saved.location, '/account?done=profile');
  const after = await visitor.get('/account?done=profile');
  assert.match(after.text, 'Your name and company are saved.');
  assert.is(inputValue(after.text, 'name'), 'Grace Brewster Hopper');
  assert.match(after.text, 'Name or company changed', 'the activity card says so');
  const shown = (await me(service, bearer(account.apiKey))).body.user;
  assert.equal([shown.name, shown.company], ['Grace Brewster Hopper', 'US Navy']);

  const cleared = await visitor.post('/account/profile', { name: 'Grace Brewster Hopper', company: '' });
  assert.is(cleared.location, '/account?done=profile');
  assert.is((await me(service, bearer(account.apiKey))).body.user.company, null);
  const emptied = (await visitor.get('/account')).text;
  assert.is(inputValue(emptied, 'company') ?? '', '', 'the company field is empty');
  assert.not.match(emptied, '<dt>Company</dt>');
});

test('profile: a refused change shows the page again with the error under its field, and changes nothing', async ({ service }) => {
  const { account, visitor } = await accountWithVisitor(service, 'page.profile.refused@example.com');
  const empty = await visitor.post('/account/profile', { name: '   ', company: 'Kept As Typed' });
  assert.is(empty.status, 400);
  assert.match(empty.text, /id="profile-name-error">Name must not be empty\.</);
  assert.is(inputValue(empty.text, 'company'), 'Kept As Typed', 'what was typed comes back');

  await visitor.get('/account');
  const long = await visitor.post('/account/profile', { name: 'x'.repeat(101), company: 'Navy' });
  assert.is(long.status, 400);
  assert.match(long.text, /id="profile-name-error">Name must be at most 100 characters\.</);
  await visitor.get('/account');
  const longCompany = await visitor.post('/account/profile', { name: 'Grace Hopper', company: 'c'.repeat(201) });
  assert.is(longCompany.status, 400);
  assert.match(longCompany.text, /id="profile-company-error">Company must be at most 200 characters\.</);

  await visitor.get('/account');
  const noToken = await visitor.post('/account/profile', { name: 'Mallory' }, { csrf: null });
  assert.is(noToken.status, 403, 'without the form token');
  await visitor.get('/account');
  const otherSite = await visitor.post('/account/profile', { name: 'Mallory' }, { origin: 'https://evil.example' });
  assert.is(otherSite.status, 403, 'from another site');

  const shown = (await me(service, bearer(account.apiKey))).body.user;
  assert.equal([shown.name, shown.company], ['Grace Hopper', 'Navy']);
  const [{ count }] = await service.deps.db.query<{ count: number }>("SELECT count(*)::int AS count FROM audit_events WHERE account_id = $1 AND event = 'profile.updated'", [account.user.id]);
  assert.is(count, 0);
});

test('"Show API key" is a POST answering the page with the key, never cached; GET /account never has it', async ({ service }) => {
  const { account, visitor } = await accountWithVisitor(service, 'page.key@example.com');
  const shown = await visitor.post('/account/api-key', {});
  assert.is(shown.status, 200);
  assert.is(shown.headers.get('cache-control'), 'no-store');
  assert.match(shown.text, `<code class="secret" id="api-key-value">${account.apiKey}</code>`);
  assert.not.match((await visitor.get('/account')).text, account.apiKey);
});

test('rotate: the new key is shown; with a grace hour the old one keeps working, at once it stops', async ({ service }) => {
  const { account, visitor } = await accountWithVisitor(service, 'page.rotate@example.com');
  const graced = await visitor.post('/account/api-key/rotate', { grace_seconds: '3600' });
  assert.is(graced.status, 200);
  const second = /id="api-key-value">([0-9a-f]{64})</.exec(graced.text)?.[1];
  assert.ok(second, 'the new key is on the page');
  made.add(second);
  assert.match(graced.text, 'keeps working for an hour');
  assert.is((await me(service, bearer(second))).status, 200);
  assert.is((await me(service, bearer(account.apiKey))).status, 200, 'the old key still works during the grace hour');

  await visitor.get('/account');
  const immediate = await visitor.post('/account/api-key/rotate', { grace_seconds: '0' });
  const third = /id="api-key-value">([0-9a-f]{64})</.exec(immediate.text)![1];
  made.add(third);
  assert.is((await me(service, bearer(second))).status, 401, 'rotated at once: the previous key stops working');
  assert.is((await me(service, bearer(third))).status, 200);

  for (const grace of ['soon', '-1', '99999999', '86401', '']) {
    const refused = await visitor.post('/account/api-key/rotate', { grace_seconds: grace });
    assert.ok(refused.status === 400, `${grace}: ${refused.status}`);
    assert.is((await me(service, bearer(third))).status, 200, 'a refused rotation changes nothing');
  }
});

test('change password: a wrong current one changes nothing; the right one keeps this session and ends the others', async ({ service }) => {
  const { account, visitor } = await accountWithVisitor(service, 'page.password@example.com');
  const other = (await login(service, account.email)).body.token;
  const wrong = await visitor.post('/account/password', { current_password: 'not it at all', new_password: NEW_PASSWORD });
  assert.is(wrong.status, 401);
  assert.match(wrong.text, 'The current password is wrong. Nothing was changed.');
  assert.is((await login(service, account.email, PASSWORD)).status, 200);

  const short = await visitor.post('/account/password', { current_password: PASSWORD, new_password: 'short' });
  assert.is(short.status, 400);
  assert.match(short.text, /id="password-new_password-error">New password must be at least 8 characters\.</);
  assert.is(inputValue(short.text, 'current_password'), undefined);

  const changed = await visitor.post('/account/password', { current_password: PASSWORD, new_password: NEW_PASSWORD });
  assert.is(changed.status, 303);
  assert.is(changed.location, '/account?done=password');
  const after = await visitor.get('/account?done=password');
  assert.is(after.status, 200, 'this session stays signed in');
  assert.match(after.text, 'Your password is changed.');
  assert.is((await me(service, bearer(other))).status, 401, 'the other session ended');
  assert.is((await login(service, account.email, NEW_PASSWORD)).status, 200);
});

test('change e-mail: needs the password; then the new address gets a link whose page moves the account', async ({ service }) => {
  const { visitor } = await accountWithVisitor(service, 'page.email.old@example.com');
  const newEmail = 'page.email.new@example.com';
  const wrong = await visitor.post('/account/email', { new_email: newEmail, password: 'not it at all' });
  assert.is(wrong.status, 401);
  assert.is(inputValue(wrong.text, 'new_email'), newEmail, 'the address typed is kept');
  const bad = await visitor.post('/account/email', { new_email: 'nope', password: PASSWORD });
  assert.is(bad.status, 400);
  assert.match(bad.text, 'id="email-new_email-error"');

  const asked = await visitor.post('/account/email', { new_email: newEmail, password: PASSWORD });
  assert.is(asked.location, '/account?done=email');
  const token = linkToken(await nextMail(service, newEmail, 0, /confirm-email/), '/confirm-email');
  made.add(token);
  await visitor.get(`/confirm-email?token=${token}`);
  const confirmed = await visitor.post('/confirm-email', { token });
  assert.is(confirmed.status, 200);
  assert.match(confirmed.text, 'New address confirmed');
  assert.match((await visitor.get('/account')).text, newEmail);
});

test('a pending e-mail change is shown with a cancel button; pressing it voids the link', async ({ service }) => {
  const { account, visitor } = await accountWithVisitor(service, 'page.pending@example.com');
  assert.not.match((await visitor.get('/account')).text, 'id="pending-email"', 'nothing pending, nothing shown');
  const asked = await request(service.url, 'POST', `${AUTH}/email/change`, { json: { new_email: 'page.pending.new@example.com', password: PASSWORD }, headers: bearer(account.token) });
  assert.is(asked.status, 200, asked.text);
  const token = linkToken(await nextMail(service, 'page.pending.new@example.com', 0, /confirm-email/), '/confirm-email');
  made.add(token);

  const page = await visitor.get('/account');
  assert.match(page.text, 'id="pending-email"');
  assert.match(page.text, '<strong>page.pending.new@example.com</strong>');
  assert.match(page.text, '<form method="post" action="/account/email/cancel">');
  const refused = await visitor.post('/account/email/cancel', {}, { csrf: null });
  assert.is(refused.status, 403, 'a cancel without the form token is refused');
  await visitor.get('/account');
  const cancelled = await visitor.post('/account/email/cancel', {});
  assert.is(cancelled.location, '/account?done=email-cancelled');
  const after = await visitor.get('/account?done=email-cancelled');
  assert.match(after.text, 'The e-mail change is cancelled');
  assert.not.match(after.text, 'id="pending-email"');
  const confirm = await request(service.url, 'POST', `${AUTH}/email/confirm`, { json: { token } });
  assert.is(confirm.status, 400, 'the link is dead');
});

test('sessions are named by browser and system, with "This device" beside the name, not cut off with it', async ({ service }) => {
  const { account, visitor } = await accountWithVisitor(service, 'page.devices@example.com');
  const chrome = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/147.0.0.0 Safari/537.36';
  const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1';
  for (const agent of [chrome, iphone, 'curl/8.5.0']) {
    const answer = await request(service.url, 'POST', `${AUTH}/login`, { json: { email: account.email, password: PASSWORD }, headers: { 'user-agent': agent } });
    assert.is(answer.status, 200);
  }
  const page = await visitor.get('/account');
  for (const name of ['Chrome on Linux', 'Safari on iOS', '>curl<']) assert.match(page.text, name);
  assert.match(page.text, `title="${chrome}"`, 'the whole user agent is in the tooltip');
  assert.match(page.text, /<span class="row-name"[^>]*>[^<]*<\/span><span class="badge badge-good">This device<\/span>/);
});

test('sessions: sign out one, then everywhere else; this session stays; an unknown id is a 404 page', async ({ service }) => {
  const { account, visitor } = await accountWithVisitor(service, 'page.sessions@example.com');
  const phone = (await login(service, account.email)).body.token;
  const laptop = (await login(service, account.email)).body.token;
  const page = await visitor.get('/account');
  assert.match(page.text, `<input type="hidden" name="session_id" value="${sessionIdOf(phone)}"/>`);
  assert.not.match(page.text, `name="session_id" value="${sessionIdOf(visitor.cookies.get('svc_token')!)}"`, 'no button to end the current session');

  const one = await visitor.post('/account/sessions/revoke', { session_id: sessionIdOf(phone) });
  assert.is(one.location, '/account?done=session');
  assert.is((await me(service, bearer(phone))).status, 401);
  assert.is((await me(service, bearer(laptop))).status, 200);

  await visitor.get('/account');
  const gone = await visitor.post('/account/sessions/revoke', { session_id: sessionIdOf(phone) });
  assert.is(gone.status, 404);
  assert.match(gone.text, 'That session had already ended.');

  const others = await visitor.post('/account/sessions/revoke-others', {});
  assert.is(others.location, '/account?done=others');
  assert.is((await me(service, bearer(laptop))).status, 401);
  assert.is((await visitor.get('/account')).status, 200);
  assert.is((await me(service, bearer(account.token))).status, 401, 'the REST login of the setup ended too');
});

test('delete: a wrong password deletes nothing; the right one deletes the account and clears the cookie', async ({ service }) => {
  const { account, visitor } = await accountWithVisitor(service, 'page.delete@example.com');
  const wrong = await visitor.post('/account/delete', { password: 'not it at all' });
  assert.is(wrong.status, 401);
  assert.match(wrong.text, 'Your account was not deleted.');
  assert.is((await me(service, bearer(account.apiKey))).status, 200);

  const deleted = await visitor.post('/account/delete', { password: PASSWORD });
  assert.is(deleted.status, 200);
  assert.match(deleted.text, 'Account deleted');
  assert.ok(deleted.headers.getSetCookie().some((line) => line.startsWith('svc_token=; ')));
  assert.is((await me(service, bearer(account.apiKey))).status, 401);
  const [{ count }] = await service.deps.db.query<{ count: number }>('SELECT count(*)::int AS count FROM accounts WHERE email = $1', [account.email]);
  assert.is(count, 0);
  assert.is((await visitor.get('/account')).location, '/login?next=/account');
});

test('a session ended elsewhere: the next form on the page goes to sign-in, and changes nothing', async ({ service }) => {
  const { account, visitor } = await accountWithVisitor(service, 'page.ended@example.com');
  const token = visitor.cookies.get('svc_token')!;
  assert.is((await request(service.url, 'POST', `${AUTH}/sessions/revoke-all`, { json: { keep_current: false }, headers: bearer(account.apiKey) })).status, 200);
  const answer = await visitor.post('/account/password', { current_password: PASSWORD, new_password: NEW_PASSWORD });
  assert.is(answer.status, 303);
  assert.is(answer.location, '/login?next=/account');
  assert.is((await login(service, account.email, PASSWORD)).status, 200);
  assert.not.ok(visitor.cookies.has('svc_token'));
  assert.is((await me(service, { cookie: `svc_token=${token}` })).status, 401);
});

test('the log holds no password, key or token of this suite, though the page showed keys', async ({ service, secrets }) => {
  // Its own account shows and rotates its key on the page, besides whatever the other tests made.
  const { account, visitor } = await accountWithVisitor(service, 'page.audit@example.com');
  assert.match((await visitor.post('/account/api-key', {})).text, account.apiKey);
  await visitor.get('/account');
  const rotated = /id="api-key-value">([0-9a-f]{64})</.exec((await visitor.post('/account/api-key/rotate', { grace_seconds: '0' })).text)?.[1];
  assert.ok(rotated, 'the new key is on the page');
  made.add(rotated);
  const text = service.logs.text();
  for (const secret of [...secrets, ...made]) assert.not.ok(text.includes(secret), `the log contains ${secret.slice(0, 8)}…`);
  assert.ok(made.size >= 4, `${made.size} keys and tokens`);
});

test.run();
