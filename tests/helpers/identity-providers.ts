import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { PASSWORD } from './auth.ts';
import { freePort, inProcessOrigin, request, startTestApp, startTestService, testFetch, type TestService } from './service.ts';

// Identity providers for the tests of sign-in with a provider (docs/API.md, Identity
// providers): panva's oidc-provider, a real OpenID Provider, in this process; and a small
// stand-in that speaks GitHub's OAuth endpoints and the two REST calls the service makes.

/** What a provider says about a person: its claims, changed by each test. */
export type Person = { email?: string; email_verified?: boolean; name?: string };

const closing = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

export async function startOidcProvider(redirectUris: string[], clientSecret: string, port?: number) {
  port ??= await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const people = new Map<string, Person>();
  const provider = new Provider(issuer, {
    clients: [{ client_id: 'gatehouse', client_secret: clientSecret, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'] }],
    async findAccount(_ctx, sub) {
      return { accountId: sub, claims: async () => ({ sub, ...people.get(sub) }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: [randomBytes(32).toString('hex')] },
  });
  // Quiet: its development-only warnings say what these tests mean to do.
  const server = provider.listen(port, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return { issuer, people, close: () => closing(server) };
}

export type OidcProvider = Awaited<ReturnType<typeof startOidcProvider>>;

type GithubUser = { id: number; login: string; name?: string; emails: Array<{ email: string; primary: boolean; verified: boolean }> };

/**
 * GitHub's authorize page (which signs `current` in at once), its token endpoint (checking
 * the client, the redirect URI and PKCE), and GET /user and /user/emails.
 */
export async function startGithubStandIn(clientId: string, clientSecret: string) {
  const codes = new Map<string, { user: GithubUser; challenge: string; redirectUri: string }>();
  const tokens = new Map<string, GithubUser>();
  const state = { current: undefined as GithubUser | undefined, authorizeQueries: [] as URLSearchParams[], tokenBodies: [] as URLSearchParams[] };
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://github.invalid');
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      state.authorizeQueries.push(url.searchParams);
      const code = randomBytes(10).toString('hex');
      const redirectUri = url.searchParams.get('redirect_uri')!;
      codes.set(code, { user: state.current!, challenge: url.searchParams.get('code_challenge') ?? '', redirectUri });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      const body = new URLSearchParams(raw);
      state.tokenBodies.push(body);
      const grant = codes.get(body.get('code') ?? '');
      codes.delete(body.get('code') ?? '');
      const verifier = body.get('code_verifier') ?? '';
      const pkce = createHash('sha256').update(verifier).digest('base64url');
      if (!grant || body.get('client_id') !== clientId || body.get('client_secret') !== clientSecret || pkce !== grant.challenge || body.get('redirect_uri') !== grant.redirectUri) {
        return json(res, 200, { error: 'bad_verification_code' });
      }
      const token = `gho_${randomBytes(16).toString('hex')}`;
      tokens.set(token, grant.user);
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const user = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /i, ''));
    if (!user) return json(res, 401, { message: 'Bad credentials' });
    if (req.method === 'GET' && url.pathname === '/user') return json(res, 200, { id: user.id, login: user.login, name: user.name ?? null });
    if (req.method === 'GET' && url.pathname === '/user/emails') return json(res, 200, user.emails.map((entry) => ({ ...entry, visibility: null })));
    json(res, 404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, state, close: () => closing(server) };
}

export type GithubStandIn = Awaited<ReturnType<typeof startGithubStandIn>>;

export type Answer = { status: number; headers: Headers; text: string; location?: string; url: string };

/**
 * A browser without JavaScript: one cookie jar per origin, redirects not followed (tests
 * see each one), forms posted as a browser posts them.
 */
export function createBrowser() {
  const jars = new Map<string, Map<string, string>>();
  const jarOf = (url: URL) => jars.get(url.host) ?? jars.set(url.host, new Map()).get(url.host)!;
  async function send(method: string, target: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
    const url = new URL(target);
    const jar = jarOf(url);
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await testFetch(url, { method, body, redirect: 'manual', headers: { ...(cookie ? { cookie } : {}), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers } });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const index = pair.indexOf('=');
      const [name, value] = [pair.slice(0, index).trim(), pair.slice(index + 1).trim()];
      const expired = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute) || /^\s*expires=Thu, 01 Jan 1970/i.test(attribute));
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    const location = response.headers.get('location') ?? undefined;
    return { status: response.status, headers: response.headers, text: await response.text(), location: location && new URL(location, url).href, url: url.href };
  }
  return {
    get: (url: string, headers?: Record<string, string>) => send('GET', url, undefined, headers),
    post: (url: string, fields: Record<string, string>) => send('POST', url, new URLSearchParams(fields).toString()),
    cookie: (origin: string, name: string) => jarOf(new URL(origin)).get(name),
    setCookie: (origin: string, name: string, value: string) => jarOf(new URL(origin)).set(name, value),
    dropCookie: (origin: string, name: string) => jarOf(new URL(origin)).delete(name),
  };
}

export type Browser = ReturnType<typeof createBrowser>;

const MAX_HOPS = 20;

/**
 * From a URL at the provider to the service's callback: follows the provider's redirects,
 * signs `sub` in on its login page and grants its consent page, and stops at the first URL
 * under `callbackPrefix` without requesting it. Returns that callback URL.
 */
export async function throughProvider(browser: Browser, start: string, sub: string, callbackPrefix: string): Promise<string> {
  let url = start;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    if (url.startsWith(callbackPrefix)) return url;
    const answer = await browser.get(url);
    if (answer.location) {
      url = answer.location;
      continue;
    }
    if (answer.status !== 200) throw new Error(`the provider answered ${answer.status} at ${url}: ${answer.text.slice(0, 300)}`);
    const form = /<form[^>]*action="([^"]+)"/.exec(answer.text);
    if (!form) throw new Error(`no form on the provider's page ${url}`);
    const action = new URL(form[1].replace(/&amp;/g, '&'), url).href;
    const fields: Record<string, string> = /name="login"/.test(answer.text) ? { prompt: 'login', login: sub, password: 'any' } : { prompt: 'consent' };
    const submitted = await browser.post(action, fields);
    if (!submitted.location) throw new Error(`the provider's form answered ${submitted.status}: ${submitted.text.slice(0, 300)}`);
    url = submitted.location;
  }
  throw new Error('too many redirects at the provider');
}

export const OIDC_SECRET = 'oidc-client-secret-never-logged';
export const GITHUB_SECRET = 'github-client-secret-never-logged';
export const OAUTH = '/api/v1/auth/oauth';

export type WithProviders = { service: TestService; op: OidcProvider; github: GithubStandIn; close(): Promise<void> };

/**
 * The service with three providers: `acme` (an OpenID Provider not trusted for e-mail),
 * `corp` (the same provider, trusted) and `github` (the stand-in). In process (startTestApp)
 * unless `options.port` (a browser's suite): the providers are servers on ports either way.
 */
export async function startServiceWithProviders(env: Record<string, string> = {}, options: { port?: boolean } = {}): Promise<WithProviders> {
  const port = options.port ? await freePort() : undefined;
  const publicUrl = port ? `http://127.0.0.1:${port}` : inProcessOrigin();
  const op = await startOidcProvider(['acme', 'corp'].map((name) => `${publicUrl}${OAUTH}/${name}/callback`), OIDC_SECRET);
  const github = await startGithubStandIn('gh-client', GITHUB_SECRET);
  const providers = {
    OAUTH_PROVIDERS: 'acme,corp,github',
    OAUTH_ACME_CLIENT_ID: 'gatehouse',
    OAUTH_ACME_CLIENT_SECRET: OIDC_SECRET,
    OAUTH_ACME_ISSUER: op.issuer,
    OAUTH_ACME_LABEL: 'Acme SSO',
    OAUTH_CORP_CLIENT_ID: 'gatehouse',
    OAUTH_CORP_CLIENT_SECRET: OIDC_SECRET,
    OAUTH_CORP_ISSUER: op.issuer,
    OAUTH_CORP_TRUST_EMAIL: 'true',
    OAUTH_GITHUB_CLIENT_ID: 'gh-client',
    OAUTH_GITHUB_CLIENT_SECRET: GITHUB_SECRET,
    OAUTH_GITHUB_AUTH_URL: github.url,
    OAUTH_GITHUB_API_URL: github.url,
    ...env,
  };
  const service = port
    ? await startTestService({ PORT: String(port), PUBLIC_URL: publicUrl, ...providers })
    : await startTestApp(providers, { origin: publicUrl });
  const withProviders: WithProviders = {
    service,
    op,
    github,
    async close() {
      // The service a test restarted, if one did: the first is stopped by then.
      await withProviders.service.close();
      await op.close();
      await github.close();
    },
  };
  return withProviders;
}

/** A whole sign-in in `browser`: the start (with `query`), the provider's pages as `sub`, and the callback's answer. */
export function signInWith(service: TestService, browser: Browser, name: string, sub: string, query = ''): Promise<Answer> {
  return signInFrom(service, browser, name, sub, `${service.url}${OAUTH}/${name}/start${query}`);
}

/** The same from a start URL the service handed out (a link's `start_url`). */
export async function signInFrom(service: TestService, browser: Browser, name: string, sub: string, startUrl: string): Promise<Answer> {
  const started = await browser.get(startUrl);
  if (started.status !== 302 || !started.location) throw new Error(`the start answered ${started.status}: ${started.text.slice(0, 300)}`);
  const callback = await throughProvider(browser, started.location, sub, `${service.url}${OAUTH}/${name}/callback`);
  return browser.get(callback);
}

/** POST /identities/{name}/link for the session of `token`, with `fields`: its answer (`start_url` on success). */
export const askToLink = (service: TestService, token: string, name: string, fields: Record<string, unknown> = { password: PASSWORD }) =>
  request(service.url, 'POST', `/api/v1/auth/identities/${name}/link`, { headers: { authorization: `Bearer ${token}` }, json: fields });

/**
 * Connects the provider's person `sub` to the account of the session `token`, as its owner
 * does: the link call (the password by default), then its start URL in `browser`, which
 * holds that session's cookie. The callback's answer.
 */
export async function linkWith(service: TestService, browser: Browser, token: string, name: string, sub: string, fields?: Record<string, unknown>): Promise<Answer> {
  const asked = await askToLink(service, token, name, fields);
  if (asked.status !== 200) throw new Error(`the link call answered ${asked.status}: ${asked.text.slice(0, 300)}`);
  return signInFrom(service, browser, name, sub, asked.body.start_url);
}

/** The reason a refused callback told /login, from its cookie. */
export const refusalOf = (service: TestService, browser: Browser) => browser.cookie(service.url, 'svc_oauth_notice');
