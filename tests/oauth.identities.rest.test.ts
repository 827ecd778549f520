import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { AUTH, PASSWORD, assertError, bearer, issuePaths, login, me, nextMail, registerAndVerify, type Account } from './helpers/auth.ts';
import { askToLink, createBrowser, linkWith, OAUTH, refusalOf, signInFrom, signInWith, startServiceWithProviders, throughProvider, type Answer, type Browser, type WithProviders } from './helpers/identity-providers.ts';
import { request, type HttpResult, type TestService } from './helpers/service.ts';

// Connected identity providers (docs/API.md, Identity providers): linking (asked for with the
// password and step-up, finished by the browser of the session that asked), the list, unlinking (never the last way in, with the password and step-up), the
// re-authentication that stands in for a password an account does not have, and garbage.

const test = suite<{ env: WithProviders }>('REST identity providers: link, list, unlink, REAUTH_REQUIRED, garbage');

test.before(async (context) => {
  context.env = await startServiceWithProviders();
});
test.after(async ({ env }) => {
  await env?.close();
});

const MINUTE = 60_000;
const get = (service: TestService, path: string, token: string) => request(service.url, 'GET', `${AUTH}/${path}`, { headers: bearer(token) });
const post = (service: TestService, path: string, token: string, json: unknown): Promise<HttpResult> => request(service.url, 'POST', `${AUTH}/${path}`, { headers: bearer(token), json });
const providersOf = async (service: TestService, token: string) => (await get(service, 'identities', token)).body.identities.map((row: { provider: string }) => row.provider);

/** A browser signed in to `account` by its session cookie. */
function browserOf(service: TestService, token: string): Browser {
  const browser = createBrowser();
  browser.setCookie(service.url, 'svc_token', token);
  return browser;
}

/** An account made through `provider` by `sub`: its fresh session token. */
async function signedUp(env: WithProviders, provider: string, sub: string, email: string): Promise<string> {
  env.op.people.set(sub, { email, email_verified: true });
  const browser = createBrowser();
  const answer = await signInWith(env.service, browser, provider, sub);
  assert.is(answer.location, `${env.service.url}/account`, answer.text);
  return browser.cookie(env.service.url, 'svc_token')!;
}

test('a signed-in browser links a provider whatever its address there; a person linked elsewhere is a conflict', async ({ env }) => {
  const { service, op } = env;
  const account = await registerAndVerify(service, 'linker@example.com');
  const seen = service.smtp.mailsTo(account.email).length;
  op.people.set('sub-link', { email: 'someone.else@elsewhere.example', email_verified: false });
  const browser = browserOf(service, account.token);
  const answer = await linkWith(service, browser, account.token, 'acme', 'sub-link', { password: PASSWORD, next: '/account#connected' });
  assert.is(answer.status, 302, answer.text);
  assert.is(answer.location, `${service.url}/account#connected`);
  const listed = (await get(service, 'identities', account.token)).body;
  assert.is(listed.has_password, true);
  assert.equal(listed.identities.map((row: { provider: string; email: string }) => [row.provider, row.email]), [['acme', 'someone.else@elsewhere.example']]);
  assert.is(listed.identities[0].linked_at, service.clock.now().toISOString());
  assert.match((await nextMail(service, account.email, seen, /Acme SSO was connected/)).subject, 'Acme SSO was connected to your account');
  // The provider now signs in to this account.
  const later = createBrowser();
  await signInWith(service, later, 'acme', 'sub-link');
  assert.is((await me(service, bearer(later.cookie(service.url, 'svc_token')!))).body.user.id, account.user.id);

  // Another account cannot take that person.
  const other = await registerAndVerify(service, 'other.linker@example.com');
  const refused = browserOf(service, other.token);
  const conflict = await linkWith(service, refused, other.token, 'acme', 'sub-link');
  assert.is(conflict.location, `${service.url}/login`);
  assert.is(refusalOf(service, refused), 'CONFLICT.acme.linked');
  // Signed in, /login passes the browser on to the account page, which says why.
  assert.is((await refused.get(`${service.url}/login`)).location, `${service.url}/account`);
  assert.match((await refused.get(`${service.url}/account`)).text, 'This Acme SSO account is already connected to another account.');
  assert.is(refusalOf(service, refused), undefined, 'told once');
  assert.equal(await providersOf(service, other.token), []);
  assert.equal(await providersOf(service, account.token), ['acme']);

  // One person of each provider per account: unlinking names the provider alone. Asked for
  // again, the link is refused at once; a ticket asked for before the first link finished
  // is refused at its callback.
  assertError(await askToLink(service, account.token, 'acme'), 409, 'CONFLICT');
  const third = await registerAndVerify(service, 'third.linker@example.com');
  const early = (await askToLink(service, third.token, 'acme')).body.start_url as string;
  assert.is((await linkWith(service, browserOf(service, third.token), third.token, 'acme', 'sub-link-third')).location, `${service.url}/account`);
  op.people.set('sub-link-second', { email: 'second@elsewhere.example', email_verified: true });
  const second = browserOf(service, third.token);
  assert.is((await signInFrom(service, second, 'acme', 'sub-link-second', early)).location, `${service.url}/login`);
  assert.is(refusalOf(service, second), 'CONFLICT.acme.another');
  assert.match((await second.get(`${service.url}/account`)).text, 'That account is already connected to another Acme SSO account');
  assert.equal((await get(service, 'identities', third.token)).body.identities.map((row: { provider: string }) => row.provider), ['acme']);
  const linkedSubjects = await service.deps.db.query<{ subject: string }>('SELECT subject FROM identities WHERE account_id = $1', [third.user.id]);
  assert.equal(linkedSubjects.map((row) => row.subject), ['sub-link-third']);
});

/** A start or callback refused as section "Linking" says: a 400 page, no redirect, no session cookie set. */
function assertLinkRefusedPage(answer: Answer): void {
  assert.is(answer.status, 400, answer.text.slice(0, 300));
  assert.match(answer.headers.get('content-type') ?? '', 'text/html');
  assert.match(answer.text, 'connect the provider again from your account page');
  assert.is(answer.location, undefined);
  assert.not.ok(answer.headers.getSetCookie().some((line) => /^svc_token=[^;]/.test(line)), 'no session is set');
}

test('intent=link without a live ticket of its own is a 400 page: a plain GET, a forged, used, expired or another provider\'s ticket', async ({ env }) => {
  const { service } = env;
  const account = await registerAndVerify(service, 'ticketless@example.com');
  const browser = browserOf(service, account.token);
  const start = (name: string, query: string, who = browser) => who.get(`${service.url}${OAUTH}/${name}/start${query}`);
  // The review's first step: the cookie alone opened a link.
  for (const query of ['?intent=link', '?intent=link&ticket=', `?intent=link&ticket=${'x'.repeat(80)}`, '?intent=link&ticket=v2.abcdefgh.AAAA.BBBB.CCCC', `?intent=link&ticket=${'y'.repeat(5000)}`]) {
    assertLinkRefusedPage(await start('acme', query));
  }
  assertLinkRefusedPage(await start('acme', '?intent=link', createBrowser()));
  assertLinkRefusedPage(await createBrowser().get(`${service.url}${OAUTH}/acme/start?intent=link`, { authorization: `Bearer ${account.token}` }));

  const asked = await askToLink(service, account.token, 'acme');
  assert.is(asked.status, 200, asked.text);
  assert.equal(Object.keys(asked.body).sort(), ['start_url', 'success']);
  const url = new URL(asked.body.start_url);
  assert.is(`${url.origin}${url.pathname}`, `${service.url}${OAUTH}/acme/start`);
  assert.is(url.searchParams.get('intent'), 'link');
  const ticket = url.searchParams.get('ticket')!;
  assert.ok(ticket.length > 40, 'a sealed ticket');
  // Another provider's start does not take it (and leaves it live), then it serves once.
  assertLinkRefusedPage(await start('corp', `?intent=link&ticket=${encodeURIComponent(ticket)}`));
  const first = await browser.get(url.href);
  assert.is(first.status, 302, first.text.slice(0, 300));
  assertLinkRefusedPage(await browser.get(url.href));
  // A ticket not used within 5 minutes is gone.
  const late = (await askToLink(service, account.token, 'acme')).body.start_url;
  service.clock.advance(5 * MINUTE + 1000);
  assertLinkRefusedPage(await browser.get(late));
  assert.equal(await providersOf(service, account.token), []);
  const events = (await get(service, 'activity', account.token)).body.items.map((item: { event: string }) => item.event);
  assert.is(events.filter((event: string) => event === 'identity.link_started').length, 2);
});

test("a link is finished only by the browser of the session that asked: another session's cookie, or none, is a 400 page that links and signs in nothing", async ({ env }) => {
  const { service, op } = env;
  const account = await registerAndVerify(service, 'session.bound@example.com');
  const otherSession = (await login(service, account.email)).body.token as string;
  op.people.set('sub-bound', { email: 'bound@elsewhere.example', email_verified: true });
  const elsewhere = browserOf(service, otherSession);
  const refused = await signInFrom(service, elsewhere, 'acme', 'sub-bound', (await askToLink(service, account.token, 'acme')).body.start_url);
  assertLinkRefusedPage(refused);
  assert.is(elsewhere.cookie(service.url, 'svc_token'), otherSession);
  const cookieless = createBrowser();
  assertLinkRefusedPage(await signInFrom(service, cookieless, 'acme', 'sub-bound', (await askToLink(service, account.token, 'acme')).body.start_url));
  assert.is(cookieless.cookie(service.url, 'svc_token'), undefined);
  assert.equal(await providersOf(service, account.token), []);
  // A Bearer JWT caller's ticket is finished by the browser holding that session's cookie.
  assert.is((await linkWith(service, browserOf(service, account.token), account.token, 'acme', 'sub-bound')).location, `${service.url}/account`);
  assert.equal(await providersOf(service, account.token), ['acme']);
});

test('asking to link: the password (or a fresh provider sign-in), step-up with a second factor, never by API key; a stolen older session links nothing', async ({ env }) => {
  const { service, op } = env;
  const account = await registerAndVerify(service, 'link.asker@example.com');
  const missing = await askToLink(service, account.token, 'acme', {});
  assertError(missing, 400, 'VALIDATION_FAILED');
  assert.equal(issuePaths(missing), ['password']);
  assertError(await askToLink(service, account.token, 'acme', { password: 'not the password' }), 401, 'INVALID_CREDENTIALS');
  assertError(await askToLink(service, account.apiKey, 'acme'), 403, 'FORBIDDEN');
  assertError(await askToLink(service, account.token, 'nobody'), 404, 'NOT_FOUND');
  const setup = await post(service, 'mfa/totp/setup', account.token, { password: PASSWORD });
  assert.is((await post(service, 'mfa/totp/enable', account.token, { code: totpCodeAt(setup.body.secret, service.clock.now()) })).status, 200);
  service.clock.advance(6 * MINUTE);
  const stepUp = await askToLink(service, account.token, 'acme');
  assertError(stepUp, 403, 'STEP_UP_REQUIRED');
  assert.equal(stepUp.body.methods, ['totp', 'recovery_code']);
  assertError(await askToLink(service, account.token, 'acme', { password: PASSWORD, code: '000000' }), 400, 'INVALID_CODE');
  op.people.set('sub-asker', { email: 'asker@elsewhere.example', email_verified: true });
  const code = totpCodeAt(setup.body.secret, service.clock.now());
  assert.is((await linkWith(service, browserOf(service, account.token), account.token, 'acme', 'sub-asker', { password: PASSWORD, code })).location, `${service.url}/account`);
  assert.equal(await providersOf(service, account.token), ['acme']);

  // The review's takeover: a stolen session of an account without a password, older than 10 minutes.
  const victim = await signedUp(env, 'acme', 'sub-victim', 'victim@example.com');
  service.clock.advance(10 * MINUTE + 1000);
  op.people.set('sub-attacker', { email: 'attacker@evil.example', email_verified: true });
  const thief = browserOf(service, victim);
  assertLinkRefusedPage(await thief.get(`${service.url}${OAUTH}/corp/start?intent=link`));
  const reauth = await askToLink(service, victim, 'corp', {});
  assertError(reauth, 403, 'REAUTH_REQUIRED');
  assert.is(reauth.body.reauth_url, `${service.url}${OAUTH}/acme/start?next=%2Faccount`);
  assert.equal(await providersOf(service, victim), ['acme']);
});

test('MFA_REQUIRED_ROLES: an account that must set up a second factor cannot connect a provider, when it asks or at the callback', async ({ env }) => {
  const account = await registerAndVerify(env.service, 'oauth.mfa-admin@example.com');
  await env.service.deps.db.query("UPDATE accounts SET role = 'admin' WHERE id = $1", [account.user.id]);
  const linked = async () => (await env.service.deps.db.query('SELECT provider FROM identities WHERE account_id = $1', [account.user.id])).length;
  env.op.people.set('sub-mfa-admin', { email: 'elsewhere.admin@example.com', email_verified: true });
  // Started while the role needed no factor: the provider's answer comes back after it does.
  const early = browserOf(env.service, account.token);
  const started = await early.get((await askToLink(env.service, account.token, 'acme')).body.start_url);
  assert.is(started.status, 302, started.text);
  const callback = await throughProvider(early, started.location!, 'sub-mfa-admin', `${env.service.url}${OAUTH}/acme/callback`);
  const now = env.service.clock.now();
  env.service = await env.service.restart({ MFA_REQUIRED_ROLES: 'admin' });
  // The restarted service's clock starts at the real time: where the tests before moved it on.
  env.service.clock.set(now);
  try {
    const finished = await early.get(callback);
    assert.is(finished.status, 403, finished.text.slice(0, 300));
    assert.match(finished.text, 'must turn on a second factor');
    const refused = await askToLink(env.service, account.token, 'acme');
    assertError(refused, 403, 'MFA_SETUP_REQUIRED');
    assert.match(refused.body.message, 'must turn on a second factor');
    assert.is(await linked(), 0, 'no new way in');
    // Signing in is still allowed: only the changes wait for the factor.
    assert.is((await me(env.service, bearer(account.token))).status, 200);
  } finally {
    env.service = await env.service.restart({ MFA_REQUIRED_ROLES: '' });
    env.service.clock.set(now);
  }
});

test('unlink: never the last way in; with another provider, a fresh provider session needs no password', async ({ env }) => {
  const { service } = env;
  const token = await signedUp(env, 'acme', 'sub-only', 'only.way@example.com');
  assertError(await post(service, 'identities/acme/unlink', token, {}), 409, 'CONFLICT');
  env.github.state.current = { id: 4242, login: 'only', emails: [{ email: 'only.way@example.com', primary: true, verified: true }] };
  const browser = browserOf(service, token);
  assert.is((await linkWith(service, browser, token, 'github', 'ignored', {})).location, `${service.url}/account`);
  assert.equal(await providersOf(service, token), ['acme', 'github']);
  const seen = service.smtp.mailsTo('only.way@example.com').length;
  const unlinked = await post(service, 'identities/acme/unlink', token, {});
  assert.is(unlinked.status, 200, unlinked.text);
  assert.equal(unlinked.body, { success: true });
  assert.equal(await providersOf(service, token), ['github']);
  assert.match((await nextMail(service, 'only.way@example.com', seen, /disconnected/)).subject, 'Acme SSO was disconnected');
  const events = (await get(service, 'activity', token)).body.items.map((item: { event: string }) => item.event);
  assert.ok(events.includes('identity.unlinked'), events.join());
  assertError(await post(service, 'identities/github/unlink', token, {}), 409, 'CONFLICT');
  assertError(await post(service, 'identities/acme/unlink', token, {}), 404, 'NOT_FOUND');
});

test('unlink by an account with a password needs it, and with a second factor on, the step-up', async ({ env }) => {
  const { service, op } = env;
  const account: Account = await registerAndVerify(service, 'unlinker@example.com');
  op.people.set('sub-unlinker', { email: 'unlinker.idp@example.com', email_verified: true });
  await linkWith(service, browserOf(service, account.token), account.token, 'acme', 'sub-unlinker');
  const missing = await post(service, 'identities/acme/unlink', account.token, {});
  assertError(missing, 400, 'VALIDATION_FAILED');
  assert.equal(issuePaths(missing), ['password']);
  assertError(await post(service, 'identities/acme/unlink', account.token, { password: 'not the password' }), 401, 'INVALID_CREDENTIALS');
  const setup = await post(service, 'mfa/totp/setup', account.token, { password: PASSWORD });
  assert.is((await post(service, 'mfa/totp/enable', account.token, { code: totpCodeAt(setup.body.secret, service.clock.now()) })).status, 200);
  service.clock.advance(6 * MINUTE);
  const stepUp = await post(service, 'identities/acme/unlink', account.token, { password: PASSWORD });
  assertError(stepUp, 403, 'STEP_UP_REQUIRED');
  assert.equal(stepUp.body.methods, ['totp', 'recovery_code']);
  assert.equal(await providersOf(service, account.token), ['acme']);
  const done = await post(service, 'identities/acme/unlink', account.token, { password: PASSWORD, code: totpCodeAt(setup.body.secret, service.clock.now()) });
  assert.is(done.status, 200, done.text);
  assert.equal(await providersOf(service, account.token), []);
});

test('no password: a provider sign-in of the last 10 minutes stands in; later, or by API key, 403 REAUTH_REQUIRED with reauth_url', async ({ env }) => {
  const { service } = env;
  const token = await signedUp(env, 'acme', 'sub-reauth', 'reauth@example.com');
  const apiKey = (await me(service, bearer(token))).body.user.api_key;
  const reauthUrl = `${service.url}${OAUTH}/acme/start?next=%2Faccount`;

  // The body is still checked first.
  assertError(await post(service, 'account/delete', token, { pass: 'x' }), 400, 'VALIDATION_FAILED');
  const byKey = await post(service, 'account/delete', apiKey, {});
  assertError(byKey, 403, 'REAUTH_REQUIRED');
  assert.is(byKey.body.reauth_url, reauthUrl);

  service.clock.advance(10 * MINUTE + 1000);
  const late = await post(service, 'email/change', token, { new_email: 'reauth.new@example.com' });
  assertError(late, 403, 'REAUTH_REQUIRED');
  assert.is(late.body.reauth_url, reauthUrl);
  assertError(await post(service, 'mfa/totp/setup', token, {}), 403, 'REAUTH_REQUIRED');

  // Signing in again through the provider: a new session, fresh for 10 minutes.
  const fresh = await signedUp(env, 'acme', 'sub-reauth', 'reauth@example.com');
  assert.is((await post(service, 'email/change', fresh, { new_email: 'reauth.new@example.com' })).status, 200);
  // Setting a password needs no current one then; afterwards, the password is asked for as usual.
  const set = await post(service, 'password/change', fresh, { new_password: 'a brand new passphrase' });
  assert.is(set.status, 200, set.text);
  assert.is((await get(service, 'identities', fresh)).body.has_password, true);
  const now = await post(service, 'account/delete', fresh, {});
  assertError(now, 400, 'VALIDATION_FAILED');
  assert.equal(issuePaths(now), ['password']);
});

test('a sign-in through a provider unlinked since stands in for no password', async ({ env }) => {
  const { service } = env;
  const token = await signedUp(env, 'acme', 'sub-unlinked', 'unlinked.standin@example.com');
  env.op.people.set('sub-unlinked-corp', { email: 'unlinked.corp@elsewhere.example', email_verified: true });
  assert.is((await linkWith(service, browserOf(service, token), token, 'corp', 'sub-unlinked-corp', {})).location, `${service.url}/account`);
  assert.equal(await providersOf(service, token), ['acme', 'corp']);
  assert.is((await post(service, 'identities/acme/unlink', token, {})).status, 200, 'the fresh acme sign-in stands in');
  // The same session, begun through acme, which no longer signs in to this account.
  const refused = await post(service, 'email/change', token, { new_email: 'unlinked.new@example.com' });
  assertError(refused, 403, 'REAUTH_REQUIRED');
  assert.is(refused.body.reauth_url, `${service.url}${OAUTH}/corp/start?next=%2Faccount`);
});

test('garbage to every new route is a 4xx with a clear body, never a 5xx', async ({ env: { service } }) => {
  const account = await registerAndVerify(service, 'garbage.oauth@example.com');
  const json = (path: string, body: string, headers: Record<string, string> = {}) =>
    request(service.url, 'POST', `${AUTH}/${path}`, { headers: { ...bearer(account.token), 'content-type': 'application/json', ...headers }, body });
  assertError(await request(service.url, 'GET', `${AUTH}/identities`), 401, 'UNAUTHORIZED');
  assertError(await request(service.url, 'POST', `${AUTH}/identities/acme/unlink`, { json: {} }), 401, 'UNAUTHORIZED');
  assertError(await json('identities/acme/unlink', '{"password":'), 400, 'INVALID_JSON');
  assertError(await json('identities/acme/unlink', '[]'), 400, 'VALIDATION_FAILED');
  assertError(await json('identities/acme/unlink', 'password=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  const unknownField = await post(service, 'identities/acme/unlink', account.token, { passwd: 'x' });
  assertError(unknownField, 400, 'VALIDATION_FAILED');
  // The account has a password, so the misspelt field leaves it missing too: both are named.
  assert.equal(issuePaths(unknownField).sort(), ['passwd', 'password']);
  assertError(await post(service, 'identities/acme/unlink', account.token, { password: 5 }), 400, 'VALIDATION_FAILED');
  assertError(await post(service, 'identities/nobody/unlink', account.token, { password: PASSWORD }), 404, 'NOT_FOUND');
  assertError(await post(service, `identities/${'x'.repeat(300)}/unlink`, account.token, { password: PASSWORD }), 400, 'VALIDATION_FAILED');
  assertError(await post(service, 'identities/a%01b/unlink', account.token, { password: PASSWORD }), 400, 'VALIDATION_FAILED');
  // The link route, as garbled.
  assertError(await request(service.url, 'POST', `${AUTH}/identities/acme/link`, { json: {} }), 401, 'UNAUTHORIZED');
  assertError(await json('identities/acme/link', '{"password":'), 400, 'INVALID_JSON');
  assertError(await json('identities/acme/link', 'null'), 400, 'VALIDATION_FAILED');
  assertError(await json('identities/acme/link', 'password=x', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  const misspelt = await post(service, 'identities/acme/link', account.token, { password: PASSWORD, nxt: '/account' });
  assertError(misspelt, 400, 'VALIDATION_FAILED');
  assert.equal(issuePaths(misspelt), ['nxt']);
  for (const fields of [{ password: [] }, { password: PASSWORD, next: 5 }, { password: PASSWORD, next: 'x'.repeat(600) }, { password: PASSWORD, code: { a: 1 } }, { password: 'a\u0000b' }, { password: PASSWORD, next: '/a\u0007' }]) {
    assertError(await post(service, 'identities/acme/link', account.token, fields), 400, 'VALIDATION_FAILED');
  }
  assertError(await post(service, `identities/${'x'.repeat(300)}/link`, account.token, { password: PASSWORD }), 400, 'VALIDATION_FAILED');
  assertError(await post(service, 'identities/%00/link', account.token, { password: PASSWORD }), 400, 'VALIDATION_FAILED');
  const providers = await request(service.url, 'GET', `${OAUTH}/providers?x=%00`);
  assert.ok(providers.status < 500, providers.text);

  const page = (path: string) => createBrowser().get(`${service.url}${path}`);
  const pages: Array<[string, number]> = [
    [`${OAUTH}/nobody/start`, 404],
    [`${OAUTH}/${'y'.repeat(500)}/start`, 404],
    [`${OAUTH}/acme/start?intent=steal`, 400],
    [`${OAUTH}/acme/start?intent=a&intent=b`, 400],
    [`${OAUTH}/nobody/callback?code=x&state=y`, 404],
    [`${OAUTH}/acme/callback`, 400],
    [`${OAUTH}/acme/callback?code=%FF%FE&state=${'z'.repeat(5000)}`, 400],
    [`${OAUTH}/acme/callback?error=access_denied`, 400],
  ];
  for (const [path, status] of pages) {
    const answer = await page(path);
    assert.is(answer.status, status, `${path.slice(0, 80)}: ${answer.text.slice(0, 200)}`);
    assert.match(answer.headers.get('content-type') ?? '', 'text/html', 'a page, never JSON');
  }
  const badCookie = createBrowser();
  badCookie.setCookie(service.url, 'svc_oauth', 'v2.garbage.%%%.x.y');
  assert.is((await badCookie.get(`${service.url}${OAUTH}/acme/callback?state=s&code=c`)).status, 400);
});

test('a `next` that leaves the site is ignored', async ({ env }) => {
  env.op.people.set('sub-next', { email: 'next.oauth@example.com', email_verified: true });
  for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
    const answer = await signInWith(env.service, createBrowser(), 'acme', 'sub-next', `?next=${encodeURIComponent(next)}`);
    assert.is(answer.location, `${env.service.url}/account`, next);
  }
  const account = await registerAndVerify(env.service, 'next.linker@example.com');
  for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
    const asked = await askToLink(env.service, account.token, 'acme', { password: PASSWORD, next });
    assert.is(asked.status, 200, asked.text);
    assert.is(new URL(asked.body.start_url).searchParams.get('next'), null, next);
  }
  const kept = await askToLink(env.service, account.token, 'acme', { password: PASSWORD, next: '/account#connected' });
  assert.is(new URL(kept.body.start_url).searchParams.get('next'), '/account#connected');
});

test.run();
