import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PASSWORD, assertError, bearer, loginFrom, me, registerAndVerify } from './helpers/auth.ts';
import { createBrowser, OAUTH, type Browser, OIDC_SECRET, refusalOf, signInWith, startOidcProvider, throughProvider, type OidcProvider, type Person } from './helpers/identity-providers.ts';
import { freePort, inProcessOrigin, startTestApp, type TestService } from './helpers/service.ts';

// What the callback checks of the provider's tokens (docs/API.md, Identity providers,
// Callback), against a real OpenID Provider (oidc-provider, in this process): a code used
// twice, an ID token with another nonce, an ID token signed by a key the issuer's JWKS does
// not hold, and how refused callbacks count against the failed-login limits (RATE_LIMITS=on).

type Env = { service: TestService; op: OidcProvider; forger: ForgingProvider; close(): Promise<void> };
const test = suite<{ env: Env }>('REST identity providers: replayed codes, nonces, ID token signatures, failed-login limits');

const closing = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

/**
 * An OpenID Provider whose issuer is a front server that passes every request to it but
 * one: its `jwks_uri`, where the front answers keys of the same ids and types as the
 * provider's, but other keys. ID tokens are signed by the provider's real key; the
 * service, reading the issuer's JWKS, holds only the forged ones. `jwksServed` counts how
 * often the service asked for them.
 */
async function startForgingProvider(redirectUri: string) {
  const frontPort = await freePort();
  const issuer = `http://127.0.0.1:${frontPort}`;
  const people = new Map<string, Person>();
  const provider = new Provider(issuer, {
    clients: [{ client_id: 'gatehouse', client_secret: OIDC_SECRET, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] }],
    async findAccount(_ctx, sub) {
      return { accountId: sub, claims: async () => ({ sub, ...people.get(sub) }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: [randomBytes(32).toString('hex')] },
  });
  const backend = provider.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => backend.once('listening', () => resolve()));
  const backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
  const discovery = (await (await fetch(`${backendUrl}/.well-known/openid-configuration`)).json()) as { jwks_uri: string };
  const jwksPath = new URL(discovery.jwks_uri).pathname;
  const real = (await (await fetch(`${backendUrl}${jwksPath}`)).json()) as { keys: JWK[] };
  const forged: JWK[] = [];
  for (const key of real.keys.filter((candidate) => candidate.kty === 'RSA')) {
    const { publicKey } = await generateKeyPair('RS256', { extractable: true });
    forged.push({ ...(await exportJWK(publicKey)), kid: key.kid, use: key.use, alg: key.alg });
  }
  assert.ok(forged.length > 0, 'the provider signs with an RSA key');
  const state = { jwksServed: 0 };
  const front = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.split('?')[0] === jwksPath) {
      state.jwksServed += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ keys: forged }));
    }
    // The Host header is kept: the provider names the front in the URLs it builds.
    const forward = httpRequest(`${backendUrl}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => front.listen(frontPort, '127.0.0.1', () => resolve()));
  return {
    issuer,
    people,
    state,
    async close() {
      await closing(front);
      await closing(backend);
    },
  };
}

type ForgingProvider = Awaited<ReturnType<typeof startForgingProvider>>;

test.before(async (context) => {
  const publicUrl = inProcessOrigin();
  const callback = (name: string) => `${publicUrl}${OAUTH}/${name}/callback`;
  const op = await startOidcProvider([callback('acme'), callback('corp')], OIDC_SECRET);
  const forger = await startForgingProvider(callback('forged'));
  const client = (name: string, issuer: string) => ({ [`OAUTH_${name}_CLIENT_ID`]: 'gatehouse', [`OAUTH_${name}_CLIENT_SECRET`]: OIDC_SECRET, [`OAUTH_${name}_ISSUER`]: issuer });
  const service = await startTestApp({
    RATE_LIMITS: 'on',
    OAUTH_PROVIDERS: 'acme,corp,forged',
    ...client('ACME', op.issuer),
    ...client('CORP', op.issuer),
    OAUTH_CORP_TRUST_EMAIL: 'true',
    ...client('FORGED', forger.issuer),
  }, { origin: publicUrl });
  context.env = {
    service,
    op,
    forger,
    async close() {
      await service.close();
      await op.close();
      await forger.close();
    },
  };
});
test.after(async ({ env }) => {
  await env?.close();
});

const count = async (service: TestService, sql: string, values: unknown[] = []) => Number((await service.deps.db.query<{ n: string }>(sql, values))[0].n);
const accountsWith = (service: TestService, email: string) => count(service, 'SELECT count(*) AS n FROM accounts WHERE email = $1', [email]);
const allRows = async (service: TestService) =>
  [await count(service, 'SELECT count(*) AS n FROM accounts'), await count(service, 'SELECT count(*) AS n FROM sessions'), await count(service, 'SELECT count(*) AS n FROM identities')];

/** Why the callbacks refused since `from` (the library's reason the service logs), for `provider`. */
const failuresLogged = (service: TestService, provider: string, from: number) =>
  service.logs.lines
    .slice(from)
    .map((line) => JSON.parse(line) as { msg?: string; provider?: string; reason?: string })
    .filter((line) => line.msg === 'identity provider sign-in failed' && line.provider === provider)
    .map((line) => line.reason ?? '');

/** A refusal as /login is told it: a 302 there, no session cookie, the reason in the notice cookie. */
function assertRefused(service: TestService, browser: Browser, answer: { status: number; location?: string; text: string }, reason: string) {
  assert.is(answer.status, 302, answer.text.slice(0, 200));
  assert.is(answer.location, `${service.url}/login`);
  assert.is(refusalOf(service, browser), reason);
  assert.is(browser.cookie(service.url, 'svc_token'), undefined);
}

test('a callback used twice with the same state cookie: the provider refuses the spent code, no second session or account', async ({ env: { service, op } }) => {
  op.people.set('sub-replay', { email: 'replay@example.com', email_verified: true });
  const browser = createBrowser();
  const started = await browser.get(`${service.url}${OAUTH}/acme/start`);
  const callback = await throughProvider(browser, started.location!, 'sub-replay', `${service.url}${OAUTH}/acme/callback`);
  const sealed = browser.cookie(service.url, 'svc_oauth')!;
  const first = await browser.get(callback);
  assert.is(first.location, `${service.url}/account`, first.text.slice(0, 200));
  const accountId = (await me(service, bearer(browser.cookie(service.url, 'svc_token')!))).body.user.id;
  const rows = await allRows(service);
  const logged = service.logs.lines.length;

  // Whoever holds the URL and the cookie (the browser's history, a proxy's log) gets nothing more.
  const replayer = createBrowser();
  replayer.setCookie(service.url, 'svc_oauth', sealed);
  assertRefused(service, replayer, await replayer.get(callback), 'PROVIDER_FAILED.acme');
  assert.match((await replayer.get(`${service.url}/login`)).text, 'Acme could not confirm who you are.');
  const reasons = failuresLogged(service, 'acme', logged);
  assert.is(reasons.length, 1);
  assert.match(reasons[0], /: invalid_grant$/, 'the provider refused the code');
  assert.not.ok(service.logs.text().includes(new URL(callback).searchParams.get('code')!), 'the code is not in the log');
  assert.equal(await allRows(service), rows);
  assert.is(await count(service, 'SELECT count(*) AS n FROM sessions WHERE account_id = $1', [accountId]), 1);
  assert.is(await accountsWith(service, 'replay@example.com'), 1);
});

test('an ID token with a nonce other than the one in the state cookie, or none: refused, nothing created', async ({ env: { service, op } }) => {
  op.people.set('sub-nonce', { email: 'nonce@example.com', email_verified: true });
  const rows = await allRows(service);
  const spoils: Array<[string, (query: URLSearchParams) => void, RegExp]> = [
    ['another nonce', (query) => query.set('nonce', 'a-nonce-this-service-never-sent'), /unexpected ID Token "nonce" claim value/],
    ['no nonce', (query) => query.delete('nonce'), /JWT "nonce" \(nonce\) claim missing/],
  ];
  for (const [what, spoil, reason] of spoils) {
    const browser = createBrowser();
    const authorization = new URL((await browser.get(`${service.url}${OAUTH}/acme/start`)).location!);
    spoil(authorization.searchParams);
    const logged = service.logs.lines.length;
    const callback = await throughProvider(browser, authorization.href, 'sub-nonce', `${service.url}${OAUTH}/acme/callback`);
    assertRefused(service, browser, await browser.get(callback), 'PROVIDER_FAILED.acme');
    const reasons = failuresLogged(service, 'acme', logged);
    assert.is(reasons.length, 1, what);
    assert.match(reasons[0], reason, `${what}: ${reasons[0]}`);
  }
  assert.is(await accountsWith(service, 'nonce@example.com'), 0);
  assert.equal(await allRows(service), rows);
});

test('an ID token signed by a key the issuer\'s JWKS does not hold: the signature check refuses it, nothing created', async ({ env: { service, forger } }) => {
  forger.people.set('sub-forged', { email: 'forged@example.com', email_verified: true, name: 'Forged' });
  const rows = await allRows(service);
  const logged = service.logs.lines.length;
  const browser = createBrowser();
  assertRefused(service, browser, await signInWith(service, browser, 'forged', 'sub-forged'), 'PROVIDER_FAILED.forged');
  assert.ok(forger.state.jwksServed > 0, 'the service read the issuer\'s JWKS');
  const reasons = failuresLogged(service, 'forged', logged);
  assert.is(reasons.length, 1);
  assert.match(reasons[0], /JWT signature verification failed/);
  assert.is(await accountsWith(service, 'forged@example.com'), 0);
  assert.equal(await allRows(service), rows);
});

test('a callback refused for an existing account\'s address counts as a failed login of that address', async ({ env: { service, op } }) => {
  const account = await registerAndVerify(service, 'counted@example.com');
  // 99 failed logins, from ten loopback addresses (each may try an account 10 times in 15 minutes).
  for (let host = 1; host <= 10; host++) {
    for (let round = 0; round < (host === 10 ? 9 : 10); round++) assert.is((await loginFrom(service, `127.0.7.${host}`, account.email)).status, 401);
  }
  assert.is((await loginFrom(service, '127.0.7.20', account.email, PASSWORD)).status, 200, 'the right password still works after 99');

  // acme is not trusted for e-mail: its person with this address is refused (CONFLICT), the 100th failure.
  op.people.set('sub-counted', { email: account.email, email_verified: true });
  const browser = createBrowser();
  assertRefused(service, browser, await signInWith(service, browser, 'acme', 'sub-counted'), 'CONFLICT.acme');
  const locked = await loginFrom(service, '127.0.7.21', account.email, PASSWORD);
  assertError(locked, 429, 'RATE_LIMITED');
  assert.is(locked.headers.get('retry-after'), '3600');

  // The limit guards the password; a provider trusted for the address still signs its person in.
  op.people.set('sub-counted-trusted', { email: account.email, email_verified: true });
  const trusted = createBrowser();
  assert.is((await signInWith(service, trusted, 'corp', 'sub-counted-trusted')).location, `${service.url}/account`);
  assert.is((await me(service, bearer(trusted.cookie(service.url, 'svc_token')!))).body.user.id, account.user.id);
});

test('one client cannot run an address to its account-wide cap through a provider that asserts it: callbacks count per address and client', async ({ env: { service, op } }) => {
  const account = await registerAndVerify(service, 'asserted@example.com');
  const failures = async () => Number((await service.deps.db.query<{ hits: number }>('SELECT hits FROM rate_limits WHERE key = $1', [`login-failed:${account.email}`]))[0]?.hits ?? 0);
  // acme is not trusted for e-mail: each callback naming the address is refused, and counts.
  op.people.set('sub-asserting', { email: account.email, email_verified: true });
  for (let round = 0; round < 10; round++) {
    const browser = createBrowser();
    assertRefused(service, browser, await signInWith(service, browser, 'acme', 'sub-asserting'), 'CONFLICT.acme');
  }
  assert.is(await failures(), 10);
  for (let round = 0; round < 5; round++) {
    const browser = createBrowser();
    assertRefused(service, browser, await signInWith(service, browser, 'acme', 'sub-asserting'), 'RATE_LIMITED.acme');
  }
  assert.is(await failures(), 10, 'held back before the account-wide count');
  assert.is((await loginFrom(service, '127.0.8.1', account.email, PASSWORD)).status, 200, 'the owner signs in from elsewhere');
});

test('sign-ins through a provider that end in a session are given back: a dozen from one client are never refused', async ({ env: { service, op } }) => {
  op.people.set('sub-frequent', { email: 'frequent.provider@example.com', email_verified: true });
  for (let round = 0; round < 12; round++) {
    const browser = createBrowser();
    const answer = await signInWith(service, browser, 'corp', 'sub-frequent');
    assert.is(answer.location, `${service.url}/account`, `sign-in ${round + 1}`);
  }
});

test.run();
