import { createHash } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, bearer, login, me, nextMail, registerAndVerify, registerForToken } from './helpers/auth.ts';
import { createBrowser, startGithubStandIn, startOidcProvider, throughProvider, type Answer, type Browser, type GithubStandIn, type OidcProvider } from './helpers/identity-providers.ts';
import { freePort, request, startTestService, type TestService } from './helpers/service.ts';

// Sign-in with an identity provider (docs/API.md, Identity providers), against a real OpenID
// Provider (oidc-provider) and a stand-in for GitHub: the start's redirect, the state cookie,
// the six ways a callback chooses an account, linking, and GitHub's own calls.

type Context = { service: TestService; op: OidcProvider; github: GithubStandIn };
const test = suite<Context>('REST identity providers: start, callback, which account, GitHub');

const OIDC_SECRET = 'oidc-client-secret-never-logged';
const GITHUB_SECRET = 'github-client-secret-never-logged';
const OAUTH = `${AUTH}/oauth`;

test.before(async (context) => {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  context.op = await startOidcProvider(['acme', 'corp'].map((name) => `${publicUrl}${OAUTH}/${name}/callback`), OIDC_SECRET);
  context.github = await startGithubStandIn('gh-client', GITHUB_SECRET);
  context.service = await startTestService({
    PORT: String(port),
    PUBLIC_URL: publicUrl,
    OAUTH_PROVIDERS: 'acme,corp,github',
    // acme: not trusted for e-mail (the default for a provider of one's own).
    OAUTH_ACME_CLIENT_ID: 'gatehouse',
    OAUTH_ACME_CLIENT_SECRET: OIDC_SECRET,
    OAUTH_ACME_ISSUER: context.op.issuer,
    OAUTH_ACME_LABEL: 'Acme SSO',
    // corp: the same provider, trusted for e-mail.
    OAUTH_CORP_CLIENT_ID: 'gatehouse',
    OAUTH_CORP_CLIENT_SECRET: OIDC_SECRET,
    OAUTH_CORP_ISSUER: context.op.issuer,
    OAUTH_CORP_TRUST_EMAIL: 'true',
    OAUTH_GITHUB_CLIENT_ID: 'gh-client',
    OAUTH_GITHUB_CLIENT_SECRET: GITHUB_SECRET,
    OAUTH_GITHUB_AUTH_URL: context.github.url,
    OAUTH_GITHUB_API_URL: context.github.url,
  });
});
test.after(async ({ service, op, github }) => {
  await service?.close();
  await op?.close();
  await github?.close();
});

const callbackOf = (service: TestService, name: string) => `${service.url}${OAUTH}/${name}/callback`;

/** A whole sign-in in `browser`: the start, the provider's pages as `sub`, and the callback's answer. */
async function signIn(service: TestService, browser: Browser, name: string, sub: string, query = ''): Promise<Answer> {
  const started = await browser.get(`${service.url}${OAUTH}/${name}/start${query}`);
  assert.is(started.status, 302, started.text);
  const callback = await throughProvider(browser, started.location!, sub, callbackOf(service, name));
  return browser.get(callback);
}

test('a new address signs up: a verified account without a password, its session says the provider', async ({ service, op }) => {
  op.people.set('sub-new', { email: 'New.Person@Example.com', email_verified: true, name: 'New Person' });
  const browser = createBrowser();
  const answer = await signIn(service, browser, 'acme', 'sub-new');
  assert.is(answer.status, 302, answer.text);
  assert.is(answer.location, `${service.url}/account`);
  const token = browser.cookie(service.url, 'svc_token');
  assert.ok(token, 'the session cookie is set');
  const user = (await me(service, bearer(token!))).body.user;
  assert.equal([user.email, user.name, user.plan, user.email_verified], ['new.person@example.com', 'New Person', 'free', true]);
  const sessions = (await request(service.url, 'GET', `${AUTH}/sessions`, { headers: bearer(token!) })).body.sessions;
  assert.equal(sessions.map((session: { via: string }) => session.via), ['acme']);
  const identities = (await request(service.url, 'GET', `${AUTH}/identities`, { headers: bearer(token!) })).body;
  assert.equal(identities.has_password, false);
  assert.equal(identities.identities.map((identity: { provider: string; label: string; email: string }) => [identity.provider, identity.label, identity.email]), [['acme', 'Acme SSO', 'New.Person@Example.com']]);
  assertError(await login(service, 'new.person@example.com', PASSWORD), 401, 'INVALID_CREDENTIALS');
});

test.run();
