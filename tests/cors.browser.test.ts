import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bearer, login as logInOverRest, me as meOverRest, registerAndVerify, type Account } from './helpers/auth.ts';
import { launchBrowser, screenshotDir, type TestBrowser } from './helpers/browser.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

type Frontend = { server: Server; port: number };
type Context = {
  service: TestService;
  browser: TestBrowser;
  account: Account;
  /** Listed, and same-site with the service (127.0.0.1, another port): the usual frontend dev setup. */
  sameSite: Frontend;
  /** Listed, but cross-site (localhost vs 127.0.0.1). */
  crossSite: Frontend;
  /** Not listed; same-site, so the browser would send the cookie. */
  unlisted: Frontend;
};
const test = suite<Context>('CORS in Chromium: a frontend on another origin calls the API with a real preflight; unlisted origins are blocked');

const SHOTS = screenshotDir('cors');

/**
 * The frontend's own script, served as a file by its own origin: the calls a single-page app
 * makes, each returning what the page could read (or that the browser refused to let it).
 */
const FRONTEND_SCRIPT = `"use strict";
function shown(url, init, result) {
  const line = (init.method || "GET") + " " + new URL(url).pathname + ": " + (result.blocked ? "blocked (" + result.error + ")" : result.status + " " + JSON.stringify(result.body).slice(0, 80));
  document.getElementById("log").textContent += line + "\\n";
  return result;
}
async function call(url, init) {
  try {
    const response = await fetch(url, Object.assign({ credentials: "include" }, init));
    return shown(url, init, { status: response.status, body: await response.json() });
  } catch (error) {
    return shown(url, init, { blocked: true, error: String(error) });
  }
}
const json = (body) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
window.frontend = {
  me: (service, token) => call(service + "/api/v1/auth/me", token ? { headers: { authorization: "Bearer " + token } } : {}),
  login: (service, email, password) => call(service + "/api/v1/auth/login", json({ email, password })),
  revokeOthers: (service) => call(service + "/api/v1/auth/sessions/revoke-all", json({ keep_current: true })),
  trpcBatch: (service, token) => call(service + "/trpc/auth.me,auth.listSessions?batch=1&input=" + encodeURIComponent("{}"), {
    headers: { authorization: "Bearer " + token, "trpc-accept": "application/json", "x-request-id": "frontend-batch-1" },
  }),
  plainPost: (service) => call(service + "/api/v1/auth/sessions/revoke-all", { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" }),
};
document.getElementById("state").textContent = "frontend loaded from " + location.origin;
`;

const FRONTEND_PAGE = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Frontend</title></head><body><h1>A frontend on another origin</h1><p id="state">loading</p><pre id="log"></pre><script src="/app.js"></script></body></html>';

async function startFrontend(): Promise<Frontend> {
  const server = createServer((req, res) => {
    if (req.url === '/app.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      return res.end(FRONTEND_SCRIPT);
    }
    res.writeHead(req.url === '/' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(req.url === '/' ? FRONTEND_PAGE : 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as AddressInfo).port };
}

test.before(async (context) => {
  context.sameSite = await startFrontend();
  context.crossSite = await startFrontend();
  context.unlisted = await startFrontend();
  context.service = await startTestService({
    CORS_ORIGINS: `http://127.0.0.1:${context.sameSite.port},http://localhost:${context.crossSite.port}`,
  });
  context.account = await registerAndVerify(context.service, 'frontend.user@example.com');
  context.browser = await launchBrowser();
});
test.after(async (context) => {
  await context.browser?.close();
  await context.service?.close();
  for (const frontend of [context.sameSite, context.crossSite, context.unlisted]) frontend?.server.close();
});

/** A fresh browser context (own cookies, own preflight cache) with the frontend at `origin` open. */
async function openFrontend(context: Context, origin: string): Promise<{ browserContext: BrowserContext; page: Page; console: string[] }> {
  const { context: browserContext, page } = await context.browser.newPage();
  const console: string[] = [];
  page.on('console', (message) => console.push(message.text()));
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => document.getElementById('state')?.textContent?.startsWith('frontend loaded'));
  return { browserContext, page, console };
}

type Call = { status?: number; body?: any; blocked?: boolean; error?: string };

/** The service's access log lines for `method path`, so far. */
function seen(service: TestService, method: string, path: string): number {
  return service.logs.lines.filter((line) => {
    const entry = JSON.parse(line);
    return entry.msg === 'request' && entry.method === method && entry.path === path;
  }).length;
}

test('a listed origin: the preflight reaches the service, then the Bearer call and a JSON POST succeed and are readable', async (context) => {
  const { service, account } = context;
  const origin = `http://127.0.0.1:${context.sameSite.port}`;
  const { browserContext, page } = await openFrontend(context, origin);
  const before = { options: seen(service, 'OPTIONS', '/api/v1/auth/me'), get: seen(service, 'GET', '/api/v1/auth/me') };

  const me: Call = await page.evaluate(([url, key]) => (window as any).frontend.me(url, key), [service.url, account.apiKey]);
  assert.is(me.status, 200, JSON.stringify(me));
  assert.is(me.body.user.email, account.email);
  assert.is(seen(service, 'OPTIONS', '/api/v1/auth/me'), before.options + 1, 'the browser sent a preflight');
  assert.is(seen(service, 'GET', '/api/v1/auth/me'), before.get + 1);

  const optionsBefore = seen(service, 'OPTIONS', '/api/v1/auth/login');
  const login: Call = await page.evaluate(([url, email, password]) => (window as any).frontend.login(url, email, password), [service.url, account.email, account.password]);
  assert.is(login.status, 200, JSON.stringify(login));
  assert.type(login.body.token, 'string');
  assert.is(seen(service, 'OPTIONS', '/api/v1/auth/login'), optionsBefore + 1, 'the JSON POST was preflighted');

  const batch: Call = await page.evaluate(([url, token]) => (window as any).frontend.trpcBatch(url, token), [service.url, account.token]);
  assert.is(batch.status, 200, JSON.stringify(batch));
  assert.is(batch.body[0].result.data.user.email, account.email);
  assert.ok(Array.isArray(batch.body[1].result.data.sessions));

  const unauthorized: Call = await page.evaluate(([url]) => (window as any).frontend.me(url, 'not-a-valid-token'), [service.url]);
  assert.is(unauthorized.status, 401, 'the 401 is readable by the frontend');
  assert.is(unauthorized.body.code, 'UNAUTHORIZED');
  await page.screenshot({ path: join(SHOTS, 'listed-origin.png') });
  await browserContext.close();
});

test('same-site, cross-origin (127.0.0.1, another port): logging in sets svc_token, and the cookie then authenticates reads and writes', async (context) => {
  const { service } = context;
  // An account of its own: the write signs out its other sessions.
  const account = await registerAndVerify(service, 'frontend.cookie@example.com');
  const { browserContext, page } = await openFrontend(context, `http://127.0.0.1:${context.sameSite.port}`);
  const login: Call = await page.evaluate(([url, email, password]) => (window as any).frontend.login(url, email, password), [service.url, account.email, account.password]);
  assert.is(login.status, 200);
  const cookies = await browserContext.cookies(service.url);
  const session = cookies.find((cookie) => cookie.name === 'svc_token');
  assert.ok(session, 'the browser kept the session cookie');
  assert.is(session.httpOnly, true);
  assert.is(session.sameSite, 'Lax');
  assert.is(await page.evaluate(() => document.cookie.includes('svc_token')), false);

  const me: Call = await page.evaluate(([url]) => (window as any).frontend.me(url), [service.url]);
  assert.is(me.status, 200, JSON.stringify(me));
  assert.is(me.body.user.email, account.email);
  const written: Call = await page.evaluate(([url]) => (window as any).frontend.revokeOthers(url), [service.url]);
  assert.is(written.status, 200, `a cookie write from a listed origin is allowed: ${JSON.stringify(written)}`);
  assert.is(written.body.success, true);
  await browserContext.close();
});

test('cross-site (localhost page, 127.0.0.1 service): CORS lets it read, but the SameSite=Lax cookie is neither kept nor sent: use Bearer', async (context) => {
  const { service, account } = context;
  const { browserContext, page } = await openFrontend(context, `http://localhost:${context.crossSite.port}`);
  const login: Call = await page.evaluate(([url, email, password]) => (window as any).frontend.login(url, email, password), [service.url, account.email, account.password]);
  assert.is(login.status, 200, JSON.stringify(login));
  assert.type(login.body.token, 'string');
  assert.not.ok((await browserContext.cookies(service.url)).some((cookie) => cookie.name === 'svc_token'), 'a cross-site fetch cannot set a Lax cookie');
  const byCookie: Call = await page.evaluate(([url]) => (window as any).frontend.me(url), [service.url]);
  assert.is(byCookie.status, 401, JSON.stringify(byCookie));
  const byBearer: Call = await page.evaluate(([url, token]) => (window as any).frontend.me(url, token), [service.url, login.body.token]);
  assert.is(byBearer.status, 200);
  assert.is(byBearer.body.user.email, account.email);
  await page.screenshot({ path: join(SHOTS, 'cross-site.png') });
  await browserContext.close();
});

test('an unlisted origin: the browser blocks the calls after a preflight without CORS headers, and never sends them', async (context) => {
  const { service, account } = context;
  const { browserContext, page, console } = await openFrontend(context, `http://127.0.0.1:${context.unlisted.port}`);
  const before = { options: seen(service, 'OPTIONS', '/api/v1/auth/me'), get: seen(service, 'GET', '/api/v1/auth/me') };
  const me: Call = await page.evaluate(([url, key]) => (window as any).frontend.me(url, key), [service.url, account.apiKey]);
  assert.is(me.blocked, true, JSON.stringify(me));
  assert.match(me.error!, 'Failed to fetch');
  assert.is(seen(service, 'OPTIONS', '/api/v1/auth/me'), before.options + 1, 'the preflight reached the service');
  assert.is(seen(service, 'GET', '/api/v1/auth/me'), before.get, 'the call itself was never sent');

  const loginsBefore = seen(service, 'POST', '/api/v1/auth/login');
  const login: Call = await page.evaluate(([url, email, password]) => (window as any).frontend.login(url, email, password), [service.url, account.email, account.password]);
  assert.is(login.blocked, true);
  assert.is(seen(service, 'POST', '/api/v1/auth/login'), loginsBefore);
  await eventually('the console names the CORS block', () => console.some((text) => /blocked by CORS policy/.test(text) && /Access-Control-Allow-Origin/.test(text)));
  await page.screenshot({ path: join(SHOTS, 'unlisted-origin.png') });
  await browserContext.close();
});

test('an unlisted same-site page sends the cookie with simple requests, but cannot read the answer, and its write is refused', async (context) => {
  const { service, account } = context;
  const { browserContext, page } = await openFrontend(context, `http://127.0.0.1:${context.sameSite.port}`);
  const login: Call = await page.evaluate(([url, email, password]) => (window as any).frontend.login(url, email, password), [service.url, account.email, account.password]);
  assert.is(login.status, 200);
  // Same browser context, so the same cookie jar: the unlisted page's requests carry svc_token.
  const other = await browserContext.newPage();
  await other.goto(`http://127.0.0.1:${context.unlisted.port}/`);
  await other.waitForFunction(() => document.getElementById('state')?.textContent?.startsWith('frontend loaded'));
  const before = seen(service, 'GET', '/api/v1/auth/me');
  const read: Call = await other.evaluate(([url]) => (window as any).frontend.me(url), [service.url]);
  assert.is(read.blocked, true, 'the answer is not readable');
  assert.is(seen(service, 'GET', '/api/v1/auth/me'), before + 1, 'a simple GET is sent without a preflight');

  // Without a preflight a page can only send text/plain, a form or multipart: never JSON.
  const elsewhere = await logInOverRest(service, account.email);
  const lines = service.logs.lines.length;
  const write: Call = await other.evaluate(([url]) => (window as any).frontend.plainPost(url), [service.url]);
  assert.is(write.blocked, true);
  const refused = service.logs.lines.slice(lines).map((line) => JSON.parse(line)).find((entry) => entry.msg === 'request' && entry.path === '/api/v1/auth/sessions/revoke-all');
  assert.ok(refused, 'the simple POST reached the service');
  assert.is(refused.status, 415, 'and was refused: a cookie write must be JSON');
  assert.is((await meOverRest(service, bearer(elsewhere.body.token))).status, 200, 'the other session was not revoked');
  await browserContext.close();
});

test.run();
