import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { registerAndVerify, type Account } from './helpers/auth.ts';
import { launchBrowser, screenshotDir, type TestBrowser } from './helpers/browser.ts';
import { request, startTestService, type TestService } from './helpers/service.ts';

type Seen = { console: string[]; pageErrors: string[]; requests: Array<{ url: string; headers: Record<string, string> }> };
type Context = { service: TestService; browser: TestBrowser; account: Account; document: any };
const test = suite<Context>('API docs page in Chromium: Swagger UI under a strict CSP, try-it against the running service');

const SHOTS = screenshotDir('api-docs');

declare global {
  interface Window {
    cspViolations: string[];
  }
}

test.before(async (context) => {
  context.service = await startTestService({ BILLING_WEBHOOK_SECRET: 'pdl_ntfset_browser_0123456789' });
  context.account = await registerAndVerify(context.service, 'swagger.reader@example.com');
  context.document = (await request(context.service.url, 'GET', '/api/v1/openapi.json')).body;
  context.browser = await launchBrowser();
});
test.after(async ({ service, browser }) => {
  await browser?.close();
  await service?.close();
});

const operationIds = (document: any): string[] =>
  Object.values(document.paths).flatMap((item: any) => Object.values(item).map((operation: any) => `operations-${operation.tags[0]}-${operation.operationId}`));

/** A page of its own on the docs, for one test, watched: CSP violations, console errors and warnings, page errors, requests. */
async function openDocs({ service, browser }: Context): Promise<{ page: Page; seen: Seen }> {
  const { context, page } = await browser.newPage();
  const seen: Seen = { console: [], pageErrors: [], requests: [] };
  // Every violation the page hits, as the browser reports it to the page itself.
  await page.addInitScript(() => {
    window.cspViolations = [];
    document.addEventListener('securitypolicyviolation', (event) => window.cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`));
  });
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') seen.console.push(message.text());
  });
  page.on('pageerror', (error) => seen.pageErrors.push(error.message));
  page.on('request', (sent) => seen.requests.push({ url: sent.url(), headers: sent.headers() }));
  // The page's own context goes with it; at the end of the file the browser may already be
  // closing it, which is the same outcome.
  page.on('close', () => void context.close().catch(() => undefined));
  await page.goto(`${service.url}/api/v1/docs`);
  await page.locator('.opblock').first().waitFor();
  return { page, seen };
}

/** Opens an operation, switches it to try-it, and returns its block. */
async function tryOut(page: Page, id: string) {
  const block = page.locator(`#${id}`);
  await block.locator('.opblock-summary').click();
  await block.locator('button.try-out__btn').click();
  return block;
}

test('the page renders every operation of openapi.json, with its files from this origin only', async (context) => {
  const { service, document } = context;
  const { page, seen } = await openDocs(context);
  const ids = operationIds(document);
  assert.ok(ids.length >= 27, `${ids.length} operations`);
  assert.is(await page.locator('.opblock').count(), ids.length);
  for (const id of ids) assert.is(await page.locator(`#${id}`).count(), 1, `${id} is rendered`);
  assert.is(await page.locator('.opblock-tag-section').count(), 3);
  assert.match(await page.locator('.info .title').innerText(), 'Gatehouse API');
  for (const { url } of seen.requests) assert.ok(url.startsWith(`${service.url}/`), `${url} is served by the service`);
  assert.ok(seen.requests.some(({ url }) => url.includes('/api/v1/docs/assets/') && url.endsWith('/swagger-ui-bundle.js')));
  await page.screenshot({ path: join(SHOTS, 'docs-page.png'), fullPage: false });
  await page.close();
});

test('Authorize with an API key, then try-it GET /auth/me: a real 200 with the account, sent with the Bearer key', async (context) => {
  const { service, account } = context;
  const { page, seen } = await openDocs(context);
  await page.locator('button.authorize').first().click();
  await page.fill('#auth-bearer-value', account.apiKey);
  await page.locator('.auth-container').first().locator('button.authorize').click();
  await page.locator('.auth-container').first().locator('.btn-done').click();
  const block = await tryOut(page, 'operations-auth-auth-me');
  await block.locator('button.execute').click();
  const status = block.locator('.live-responses-table tbody .response-col_status').first();
  await status.waitFor();
  assert.is((await status.innerText()).trim(), '200');
  const body = await block.locator('.live-responses-table tbody .response-col_description pre').first().innerText();
  assert.is(JSON.parse(body).user.email, account.email);
  const sent = seen.requests.filter(({ url }) => url === `${service.url}/api/v1/auth/me`);
  assert.is(sent.length, 1);
  assert.is(sent[0].headers.authorization, `Bearer ${account.apiKey}`);
  await block.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, 'try-it-me.png'), fullPage: false });
  await page.close();
});

/** Try-it on the billing webhook with a signature that cannot be right: the block, once it shows the answer's status. */
async function tryBadSignature(page: Page) {
  const block = await tryOut(page, 'operations-webhooks-webhook-billing');
  const header = block.locator('tr[data-param-name="Paddle-Signature"] input');
  await header.fill('ts=1;h1=0000000000000000000000000000000000000000000000000000000000000000');
  await block.locator('button.execute').click();
  const status = block.locator('.live-responses-table tbody .response-col_status').first();
  await status.waitFor();
  return { block, status: (await status.innerText()).trim() };
}

test('try-it on a webhook route goes to PUBLIC_URL itself, not /api/v1, and gets the real 401 for a bad signature', async (context) => {
  const { service } = context;
  const { page, seen } = await openDocs(context);
  const { block, status } = await tryBadSignature(page);
  assert.is(status, '401');
  const body = JSON.parse(await block.locator('.live-responses-table tbody .response-col_description pre').first().innerText());
  assert.is(body.code, 'INVALID_SIGNATURE');
  const sent = seen.requests.filter(({ url }) => url === `${service.url}/billingprovider/webhook`);
  assert.is(sent.length, 1);
  assert.match(sent[0].headers['paddle-signature'], /^ts=1;h1=0{64}$/);
  await block.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, 'try-it-webhook.png'), fullPage: false });
  await page.close();
});

test('nothing is blocked by the CSP, nothing throws, and the console shows only the deliberate 401', async (context) => {
  const { page, seen } = await openDocs(context);
  assert.is((await tryBadSignature(page)).status, '401');
  assert.equal(await page.evaluate(() => window.cspViolations), []);
  assert.equal(seen.pageErrors, []);
  const unexpected = seen.console.filter((text) => !/Failed to load resource: the server responded with a status of 401/.test(text));
  assert.equal(unexpected, []);
  await page.close();
});

test.run();
