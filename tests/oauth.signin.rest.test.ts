import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { AUTH, PASSWORD, assertError, bearer, login, me, nextMail, registerAndVerify, registerForToken } from './helpers/auth.ts';
import {
  createBrowser,
  GITHUB_SECRET,
  OAUTH,
  OIDC_SECRET,
  refusalOf,
  signInWith,
  startServiceWithProviders,
  throughProvider,
  type WithProviders,
} from './helpers/identity-providers.ts';
import { request, type TestService } from './helpers/service.ts';

// Sign-in with an identity provider (docs/API.md, Identity providers), against a real OpenID
// Provider (oidc-provider, in this process) and a stand-in for GitHub: the start's redirect,
// the state cookie, the six ways a callback chooses an account, the second factor after
// the provider, and GitHub's own calls.

const test = suite<{ env: WithProviders }>('REST identity providers: start, callback, which account, GitHub');

test.before(async (context) => {
  context.env = await startServiceWithProviders();
});
test.after(async ({ env }) => {
  await env?.close();
});

const get = (service: TestService, path: string, token: string) => request(service.url, 'GET', `${AUTH}/${path}`, { headers: bearer(token) });
const identitiesOf = async (service: TestService, token: string) => (await get(service, 'identities', token)).body;
const accountsWith = async (service: TestService, email: string) => (await service.deps.db.query('SELECT id FROM accounts WHERE email = $1', [email])).length;
const identityCount = async (service: TestService) => Number((await service.deps.db.query<{ n: string }>('SELECT count(*) AS n FROM identities'))[0].n);

test('GET /oauth/providers lists each provider with its label and where its sign-in starts', async ({ env: { service } }) => {
  const answer = await request(service.url, 'GET', `${OAUTH}/providers`);
  assert.is(answer.status, 200);
  assert.equal(answer.body.providers, [
    { name: 'acme', label: 'Acme SSO', start_url: `${service.url}${OAUTH}/acme/start` },
    { name: 'corp', label: 'Corp', start_url: `${service.url}${OAUTH}/corp/start` },
    { name: 'github', label: 'Github', start_url: `${service.url}${OAUTH}/github/start` },
  ]);
});

test('the start redirects with code, the exact redirect URI, scopes, state, nonce and PKCE S256, all kept in a sealed cookie', async ({ env: { service, op, github } }) => {
  const browser = createBrowser();
  const started = await browser.get(`${service.url}${OAUTH}/acme/start?next=/account%3Ftab%3Dsessions`);
  assert.is(started.status, 302);
  const url = new URL(started.location!);
  assert.is(url.origin, op.issuer);
  const query = url.searchParams;
  assert.is(query.get('response_type'), 'code');
  assert.is(query.get('client_id'), 'gatehouse');
  assert.is(query.get('redirect_uri'), `${service.url}${OAUTH}/acme/callback`);
  assert.is(query.get('scope'), 'openid email profile');
  assert.is(query.get('code_challenge_method'), 'S256');
  assert.match(query.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
  assert.match(query.get('state')!, /^[A-Za-z0-9_-]{20,}$/);
  assert.match(query.get('nonce')!, /^[A-Za-z0-9_-]{20,}$/);
  const cookie = started.headers.getSetCookie().find((line) => line.startsWith('svc_oauth='))!;
  assert.match(cookie, /; Path=\/; HttpOnly; SameSite=Lax; Max-Age=600$/);
  const sealed = browser.cookie(service.url, 'svc_oauth')!;
  for (const value of [query.get('state')!, query.get('nonce')!, '/account']) assert.not.ok(sealed.includes(value), 'the cookie is sealed, not readable');
  // A second start makes new values: nothing is reused between sign-ins.
  const again = new URL((await createBrowser().get(`${service.url}${OAUTH}/acme/start`)).location!).searchParams;
  assert.not.equal([again.get('state'), again.get('nonce'), again.get('code_challenge')], [query.get('state'), query.get('nonce'), query.get('code_challenge')]);

  const githubStart = new URL((await createBrowser().get(`${service.url}${OAUTH}/github/start`)).location!);
  assert.is(`${githubStart.origin}${githubStart.pathname}`, `${github.url}/login/oauth/authorize`);
  assert.is(githubStart.searchParams.get('scope'), 'read:user user:email');
  assert.is(githubStart.searchParams.get('code_challenge_method'), 'S256');
  assert.is(githubStart.searchParams.get('nonce'), null, 'GitHub is not OpenID Connect');
});

test('(4) a new address signs up: verified, no password, name from the claim, session via the provider', async ({ env: { service, op } }) => {
  op.people.set('sub-new', { email: 'New.Person@Example.com', email_verified: true, name: 'New Person' });
  const browser = createBrowser();
  const answer = await signInWith(service, browser, 'acme', 'sub-new', '?next=/account%3Fwelcome%3D1');
  assert.is(answer.status, 302, answer.text);
  assert.is(answer.location, `${service.url}/account?welcome=1`);
  assert.is(browser.cookie(service.url, 'svc_oauth'), undefined, 'the state cookie is used once');
  const token = browser.cookie(service.url, 'svc_token')!;
  const user = (await me(service, bearer(token))).body.user;
  assert.equal([user.email, user.name, user.plan, user.role, user.email_verified], ['new.person@example.com', 'New Person', 'free', 'user', true]);
  assert.equal((await get(service, 'sessions', token)).body.sessions.map((session: { via: string }) => session.via), ['acme']);
  const identities = await identitiesOf(service, token);
  assert.is(identities.has_password, false);
  assert.equal(identities.identities.map((row: { provider: string; label: string; email: string }) => [row.provider, row.label, row.email]), [['acme', 'Acme SSO', 'New.Person@Example.com']]);
  const events = (await get(service, 'activity', token)).body.items.map((item: { event: string }) => item.event);
  assert.ok(events.includes('login.oauth') && events.includes('identity.linked'), events.join());
  assertError(await login(service, 'new.person@example.com', PASSWORD), 401, 'INVALID_CREDENTIALS');

  // Without a name claim, the address's local part.
  op.people.set('sub-nameless', { email: 'nameless@example.com', email_verified: true });
  const nameless = createBrowser();
  assert.is((await signInWith(service, nameless, 'acme', 'sub-nameless')).status, 302);
  assert.is((await me(service, bearer(nameless.cookie(service.url, 'svc_token')!))).body.user.name, 'nameless');

  // A name claim keeps the rules of a typed name: no control character (a NUL cannot even be
  // stored), nor half a surrogate pair; at most 100 characters; nothing left, the local part.
  const claims: Array<[string, string]> = [
    ['Ann\nLee\u0007', 'Ann Lee'],
    ['bad\u0000name', 'bad name'],
    ['\u0000\u0001 \t', 'controls'],
    ['Half \ud800 pair', 'Half pair'],
    [`${'é'.repeat(99)}😀😀`, `${'é'.repeat(99)}😀`],
  ];
  for (const [index, [claim, stored]] of claims.entries()) {
    const email = index === 2 ? 'controls@example.com' : `claim.${index}@example.com`;
    op.people.set(`sub-claim-${index}`, { email, email_verified: true, name: claim });
    const browser = createBrowser();
    const answer = await signInWith(service, browser, 'acme', `sub-claim-${index}`);
    assert.is(answer.status, 302, `${JSON.stringify(claim)}: ${answer.text.slice(0, 200)}`);
    assert.is((await me(service, bearer(browser.cookie(service.url, 'svc_token')!))).body.user.name, stored, JSON.stringify(claim));
  }
});

test('(1) a linked person signs in to its account, whatever its address at the provider is now', async ({ env: { service, op } }) => {
  op.people.set('sub-returning', { email: 'returning@example.com', email_verified: true, name: 'Returning' });
  const first = createBrowser();
  await signInWith(service, first, 'acme', 'sub-returning');
  const id = (await me(service, bearer(first.cookie(service.url, 'svc_token')!))).body.user.id;
  op.people.set('sub-returning', { email: 'moved@elsewhere.example', email_verified: false });
  const second = createBrowser();
  assert.is((await signInWith(service, second, 'acme', 'sub-returning')).location, `${service.url}/account`);
  assert.is((await me(service, bearer(second.cookie(service.url, 'svc_token')!))).body.user.id, id);
  assert.is(await accountsWith(service, 'moved@elsewhere.example'), 0);
});

test('(3) an address the provider did not verify is refused, and nothing is created', async ({ env: { service, op } }) => {
  const identities = await identityCount(service);
  for (const [sub, person] of [['sub-unverified', { email: 'unverified@example.com', email_verified: false }], ['sub-no-email', { name: 'No Mail' }]] as const) {
    op.people.set(sub, person);
    const browser = createBrowser();
    const answer = await signInWith(service, browser, 'acme', sub);
    assert.is(answer.status, 302);
    assert.is(answer.location, `${service.url}/login`);
    assert.is(refusalOf(service, browser), 'EMAIL_NOT_VERIFIED.acme');
    assert.is(browser.cookie(service.url, 'svc_token'), undefined);
    // /login says why, once.
    const page = await browser.get(`${service.url}/login`);
    assert.match(page.text, 'Acme SSO has not verified your e-mail address');
    assert.is(refusalOf(service, browser), undefined);
  }
  assert.is(await accountsWith(service, 'unverified@example.com'), 0);
  assert.is(await identityCount(service), identities);
});

test('(6) an address of an existing account, from a provider not trusted for e-mail: refused, the account unchanged', async ({ env: { service, op } }) => {
  const account = await registerAndVerify(service, 'has.password@example.com');
  op.people.set('sub-untrusted', { email: 'has.password@example.com', email_verified: true });
  const browser = createBrowser();
  const answer = await signInWith(service, browser, 'acme', 'sub-untrusted');
  assert.is(answer.location, `${service.url}/login`);
  assert.is(refusalOf(service, browser), 'CONFLICT.acme');
  assert.match((await browser.get(`${service.url}/login`)).text, 'Sign in with your password, then connect Acme SSO on your account page');
  assert.equal((await identitiesOf(service, account.token)).identities, []);
  assert.is((await login(service, account.email)).status, 200, 'the password still works');
});

test('(5) a trusted provider joins the existing account of its verified address, and mails a notice', async ({ env: { service, op } }) => {
  const account = await registerAndVerify(service, 'joined@example.com');
  const seen = service.smtp.mailsTo(account.email).length;
  op.people.set('sub-trusted', { email: 'joined@example.com', email_verified: true });
  const browser = createBrowser();
  assert.is((await signInWith(service, browser, 'corp', 'sub-trusted')).location, `${service.url}/account`);
  assert.is((await me(service, bearer(browser.cookie(service.url, 'svc_token')!))).body.user.id, account.user.id);
  assert.equal((await identitiesOf(service, account.token)).identities.map((row: { provider: string }) => row.provider), ['corp']);
  assert.match((await nextMail(service, account.email, seen, /Corp was connected/)).text, 'Corp');
  assert.is((await login(service, account.email)).status, 200, 'a verified account keeps its password');

  // Another person of that provider with the same address does not join: the account has its person there.
  op.people.set('sub-trusted-second', { email: 'joined@example.com', email_verified: true });
  const second = createBrowser();
  assert.is((await signInWith(service, second, 'corp', 'sub-trusted-second')).location, `${service.url}/login`);
  assert.is(refusalOf(service, second), 'CONFLICT.corp.another');
  assert.is(second.cookie(service.url, 'svc_token'), undefined);
  assert.equal((await identitiesOf(service, account.token)).identities.map((row: { provider: string }) => row.provider), ['corp']);
});

test('(5) a registration never confirmed loses its password and pending link to the trusted provider\'s person', async ({ env: { service, op } }) => {
  const email = 'squatted@example.com';
  const verifyToken = await registerForToken(service, email);
  op.people.set('sub-owner', { email, email_verified: true, name: 'Mailbox Owner' });
  const browser = createBrowser();
  assert.is((await signInWith(service, browser, 'corp', 'sub-owner')).location, `${service.url}/account`);
  const token = browser.cookie(service.url, 'svc_token')!;
  const user = (await me(service, bearer(token))).body.user;
  assert.is(user.email_verified, true);
  assert.is((await identitiesOf(service, token)).has_password, false);
  // Whoever registered the address first cannot sign in with the password they chose, nor bring it back by the link.
  assertError(await login(service, email, PASSWORD), 401, 'INVALID_CREDENTIALS');
  assertError(await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token: verifyToken } }), 400, 'INVALID_TOKEN');
  assertError(await login(service, email, PASSWORD), 401, 'INVALID_CREDENTIALS');
});

test('a missing, tampered, foreign or expired state cookie, or another state: a 400 page and nothing created', async ({ env: { service, op } }) => {
  op.people.set('sub-state', { email: 'state@example.com', email_verified: true });
  const identities = await identityCount(service);
  const attempt = async (spoil: (browser: ReturnType<typeof createBrowser>, callback: URL) => URL | void) => {
    const browser = createBrowser();
    const started = await browser.get(`${service.url}${OAUTH}/acme/start`);
    const callback = new URL(await throughProvider(browser, started.location!, 'sub-state', `${service.url}${OAUTH}/acme/callback`));
    const answer = await browser.get((spoil(browser, callback) ?? callback).href);
    assert.is(answer.status, 400, answer.text.slice(0, 200));
    assert.match(answer.headers.get('content-type') ?? '', 'text/html');
    assert.match(answer.text, 'was not started here, or took longer than 10 minutes');
    assert.is(browser.cookie(service.url, 'svc_token'), undefined);
  };
  await attempt((browser) => void browser.dropCookie(service.url, 'svc_oauth'));
  await attempt((browser) => {
    const sealed = browser.cookie(service.url, 'svc_oauth')!;
    // Never the seal it was: its last two characters become "AA", or "BB" where they were "AA"
    // (the tamper before left a seal ending in "BA" as it was, one run in 64 or so).
    browser.setCookie(service.url, 'svc_oauth', `${sealed.slice(0, -2)}${sealed.endsWith('AA') ? 'BB' : 'AA'}`);
  });
  await attempt((_browser, callback) => {
    callback.searchParams.set('state', 'another-state-than-the-one-sent');
  });
  await attempt((_browser, callback) => {
    callback.searchParams.delete('state');
  });
  // Another provider's cookie does not open this one's callback.
  await attempt((browser, callback) => {
    void browser;
    return new URL(callback.href.replace('/acme/', '/corp/'));
  });
  await attempt(() => service.clock.advance(10 * 60_000 + 1000));
  assert.is(await accountsWith(service, 'state@example.com'), 0);
  assert.is(await identityCount(service), identities);
});

test('a person who cancels at the provider is sent to /login with the reason', async ({ env: { service } }) => {
  const browser = createBrowser();
  const state = new URL((await browser.get(`${service.url}${OAUTH}/acme/start`)).location!).searchParams.get('state')!;
  const answer = await browser.get(`${service.url}${OAUTH}/acme/callback?error=access_denied&state=${state}`);
  assert.is(answer.status, 302);
  assert.is(answer.location, `${service.url}/login`);
  assert.is(refusalOf(service, browser), 'CANCELLED.acme');
  assert.match((await browser.get(`${service.url}/login`)).text, 'Signing in with Acme SSO was cancelled.');
});

test('an account with a second factor gets its second step after the provider, and the session says the provider', async ({ env: { service, op } }) => {
  const account = await registerAndVerify(service, 'two.factor@example.com');
  const setup = await request(service.url, 'POST', `${AUTH}/mfa/totp/setup`, { headers: bearer(account.token), json: { password: PASSWORD } });
  const enabled = await request(service.url, 'POST', `${AUTH}/mfa/totp/enable`, { headers: bearer(account.token), json: { code: totpCodeAt(setup.body.secret, service.clock.now()) } });
  assert.is(enabled.status, 200, enabled.text);
  service.clock.advance(30_000);
  op.people.set('sub-2fa', { email: account.email, email_verified: true });
  const linked = async () => (await service.deps.db.query('SELECT provider FROM identities WHERE account_id = $1', [account.user.id])).map((row) => row.provider);
  const connectedNotice = /Corp was connected to your account/;
  const activity = async () => (await get(service, 'activity', account.token)).body.items.map((item: { event: string }) => item.event);

  // A sign-in abandoned at the second step (a wrong code, then nothing) links nothing.
  const abandoned = createBrowser();
  assert.is((await signInWith(service, abandoned, 'corp', 'sub-2fa')).location, `${service.url}/login/mfa`);
  const wrong = await request(service.url, 'POST', `${AUTH}/login/mfa`, { json: { mfa_token: abandoned.cookie(service.url, 'svc_mfa')!.split('.')[0], code: '000000' } });
  assert.is(wrong.status, 401, wrong.text);
  assert.equal(await linked(), [], 'no link before the second step');
  assert.not.ok((await activity()).includes('identity.linked'));
  assert.not.ok(service.smtp.mailsTo(account.email).some((mail) => connectedNotice.test(mail.subject)), 'no notice');

  const browser = createBrowser();
  const answer = await signInWith(service, browser, 'corp', 'sub-2fa', '?next=/account%3Ftab%3Dsecurity');
  assert.is(answer.status, 302);
  assert.is(answer.location, `${service.url}/login/mfa?next=%2Faccount%3Ftab%3Dsecurity`);
  assert.is(browser.cookie(service.url, 'svc_token'), undefined, 'no session before the second step');
  const pending = browser.cookie(service.url, 'svc_mfa')!;
  assert.match(answer.headers.getSetCookie().find((line) => line.startsWith('svc_mfa='))!, /HttpOnly; SameSite=Lax; Max-Age=300/);
  assert.not.match(answer.location!, pending.split('.')[0], 'the token is never in the URL');
  const finished = await request(service.url, 'POST', `${AUTH}/login/mfa`, { json: { mfa_token: pending.split('.')[0], code: totpCodeAt(setup.body.secret, service.clock.now()) } });
  assert.is(finished.status, 200, finished.text);
  assert.is(finished.body.user.id, account.user.id);
  const sessions = (await get(service, 'sessions', finished.body.token)).body.sessions;
  assert.equal(sessions.find((session: { current: boolean }) => session.current).via, 'corp');
  // Linked once the second step passed, told, and then the provider's sign-in is rule (1).
  assert.equal(await linked(), ['corp']);
  assert.ok((await activity()).includes('identity.linked'));
  await nextMail(service, account.email, 0, connectedNotice);
});

test('GitHub: the code for a token with the PKCE verifier, the person from /user, the address from the primary verified one', async ({ env: { service, github } }) => {
  github.state.current = { id: 9001, login: 'octo', name: 'Octo Cat', emails: [{ email: 'other@example.com', primary: false, verified: true }, { email: 'octo@example.com', primary: true, verified: true }] };
  const browser = createBrowser();
  const answer = await signInWith(service, browser, 'github', 'ignored');
  assert.is(answer.location, `${service.url}/account`, answer.text);
  const token = browser.cookie(service.url, 'svc_token')!;
  const user = (await me(service, bearer(token))).body.user;
  assert.equal([user.email, user.name, user.email_verified], ['octo@example.com', 'Octo Cat', true]);
  const body = github.state.tokenBodies.at(-1)!;
  assert.match(body.get('code_verifier') ?? '', /^[A-Za-z0-9_-]{43,128}$/);
  assert.is(body.get('redirect_uri'), `${service.url}${OAUTH}/github/callback`);
  assert.equal((await get(service, 'sessions', token)).body.sessions.map((session: { via: string }) => session.via), ['github']);

  // A primary address GitHub has not verified is no verified address.
  github.state.current = { id: 9002, login: 'unverified', emails: [{ email: 'octo2@example.com', primary: true, verified: false }] };
  const refused = createBrowser();
  assert.is((await signInWith(service, refused, 'github', 'ignored')).location, `${service.url}/login`);
  assert.is(refusalOf(service, refused), 'EMAIL_NOT_VERIFIED.github');
  assert.is(await accountsWith(service, 'octo2@example.com'), 0);
});

test('no client secret, code, state or provider token reached the log', async ({ env: { service, github } }) => {
  const log = service.logs.text();
  assert.ok(log.length > 0);
  for (const secret of [OIDC_SECRET, GITHUB_SECRET]) assert.not.ok(log.includes(secret), 'a client secret is in the log');
  for (const query of github.state.authorizeQueries) assert.not.ok(log.includes(query.get('state')!), 'a state is in the log');
  assert.not.ok(/gho_[0-9a-f]{32}/.test(log), 'a GitHub token is in the log');
  for (const body of github.state.tokenBodies) assert.not.ok(log.includes(body.get('code')!), 'a code is in the log');
});

test.run();
