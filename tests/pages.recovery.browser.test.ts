import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bearer, login as loginOverRest, me as meOverRest, nextMail, registerAndVerify, type Account } from './helpers/auth.ts';
import { launchBrowser, screenshotDir, type TestBrowser } from './helpers/browser.ts';
import { request, startTestService, type TestService } from './helpers/service.ts';

// The pages (docs/API.md, Pages) in Chromium, the two ways a browser reaches the pages without having
// opened them first: a mailed reset link, and another site's form aimed at the account.

type Attacker = { server: Server; url: string };
type Context = {
  service: TestService;
  browser: TestBrowser;
  page: Page;
  account: Account;
  /** Cross-site: `localhost` against the service's 127.0.0.1, so SameSite=Lax keeps the cookie home. */
  crossSite: Attacker;
  /** Same-site, another origin (127.0.0.1, another port): the browser does send the cookie. */
  sameSite: Attacker;
};
const test = suite<Context>('pages in Chromium: reset from the mailed link; forms from other sites change nothing');

const SHOTS = screenshotDir('pages-recovery');
const NEW_PASSWORD = 'a password chosen after forgetting';

/**
 * A page that looks harmless and holds forms aimed at the account page's actions, with a
 * made-up CSRF token: what an attacker can build without reading our pages.
 */
function attackerPage(service: string): string {
  const form = (action: string, label: string, fields: Record<string, string>) =>
    `<form method="post" action="${service}${action}">` +
    Object.entries(fields)
      .map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`)
      .join('') +
    `<button>${label}</button></form>`;
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Win a prize</title></head><body><h1>Claim your prize</h1>' +
    form('/account/api-key/rotate', 'Claim by rotating', { csrf_token: 'guessed-token', grace_seconds: '0' }) +
    form('/account/sessions/revoke-others', 'Claim by signing out', { csrf_token: 'guessed-token' }) +
    form('/logout', 'Claim by logging out', {}) +
    '</body></html>'
  );
}

async function startAttacker(host: string, service: string): Promise<Attacker> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(attackerPage(service)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://${host}:${(server.address() as AddressInfo).port}` };
}

test.before(async (context) => {
  context.service = await startTestService();
  context.account = await registerAndVerify(context.service, 'grace.recovery@example.com', { name: 'Grace Hopper' });
  context.crossSite = await startAttacker('localhost', context.service.url);
  context.sameSite = await startAttacker('127.0.0.1', context.service.url);
  context.browser = await launchBrowser();
  context.page = (await context.browser.newPage()).page;
});
test.after(async ({ browser, service, crossSite, sameSite }) => {
  await browser?.close();
  crossSite?.server.close();
  sameSite?.server.close();
  await service?.close();
});

const shoot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const heading = async (page: Page) => (await page.textContent('h1'))?.trim();

test('forgot password: the page sends a link; the link opens a form; the new password is the password', async ({ service, page, account }) => {
  await page.goto(`${service.url}/login`);
  await page.getByRole('link', { name: /forgot/i }).click();
  await page.waitForURL(`${service.url}/forgot-password`);
  await shoot(page, '01-forgot');
  await page.getByLabel('E-mail address').fill(account.email);
  await page.getByRole('button', { name: 'Send the link' }).click();
  await page.waitForLoadState();
  assert.match((await page.textContent('main')) ?? '', 'Check your inbox');
  await shoot(page, '02-forgot-sent');

  const mail = await nextMail(service, account.email, 0, /reset-password/);
  const link = new RegExp(`${service.url.replace(/\./g, '\\.')}/reset-password\\?token=[\\w-]+`).exec(mail.text);
  assert.ok(link, mail.text);
  await page.goto(link[0]);
  assert.is(await heading(page), 'Choose a new password');
  assert.is((await loginOverRest(service, account.email, account.password)).status, 200, 'opening the link changed nothing');
  await shoot(page, '03-reset-form');

  await page.getByLabel('New password').fill('short');
  await page.getByRole('button', { name: 'Set new password' }).click();
  await page.waitForLoadState();
  assert.is(await heading(page), 'Choose a new password', 'a bad password keeps the form, with the same link');
  await shoot(page, '04-reset-refused');
  await page.getByLabel('New password').fill(NEW_PASSWORD);
  await page.getByRole('button', { name: 'Set new password' }).click();
  await page.waitForLoadState();
  assert.is(await heading(page), 'Password changed');
  await shoot(page, '05-reset-done');
  assert.is((await loginOverRest(service, account.email, account.password)).status, 401);
  assert.is((await loginOverRest(service, account.email, NEW_PASSWORD)).status, 200);
  assert.is((await meOverRest(service, bearer(account.token))).status, 401, 'the reset ended every session');

  // The link was used: opening it again shows the form, but sending it is refused.
  await page.goto(link[0]);
  await page.getByLabel('New password').fill('yet another password');
  await page.getByRole('button', { name: 'Set new password' }).click();
  await page.waitForLoadState();
  assert.is(await heading(page), 'Link no longer valid');
  assert.is((await loginOverRest(service, account.email, NEW_PASSWORD)).status, 200);
  await shoot(page, '06-reset-link-used');
});

/** How many sessions the account has and its current API key, over REST with the key. */
async function accountState(service: TestService, apiKey: string) {
  const sessions = await request(service.url, 'GET', '/api/v1/auth/sessions', { headers: bearer(apiKey) });
  assert.is(sessions.status, 200, sessions.text);
  return { sessions: sessions.body.sessions.length as number, keyWorks: (await meOverRest(service, bearer(apiKey))).status === 200 };
}

test('signed in, then another site\'s forms: refused with nothing changed, the session and the key intact', async ({ service, browser, crossSite, sameSite }) => {
  // An account and a browser of its own: the reset test changes the other's password and ends its sessions.
  const account = await registerAndVerify(service, 'grace.attacked@example.com', { name: 'Grace Hopper' });
  const { page } = await browser.newPage();
  await page.goto(`${service.url}/login`);
  await page.getByLabel('E-mail address').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${service.url}/account`);
  const other = await loginOverRest(service, account.email, account.password);
  assert.is(other.status, 200);
  const before = await accountState(service, account.apiKey);
  // This browser's session, `other`, and the one registerAndVerify signed in.
  assert.ok(before.sessions >= 2 && before.keyWorks, JSON.stringify(before));

  for (const [where, attacker] of [['cross-site', crossSite], ['same-site', sameSite]] as const) {
    for (const button of ['Claim by rotating', 'Claim by signing out', 'Claim by logging out']) {
      await page.goto(attacker.url);
      await page.getByRole('button', { name: button }).click();
      await page.waitForLoadState();
      const shown = await heading(page);
      // Same-site, the cookie came along and the origin check refused; cross-site, the
      // browser kept the cookie home, so there was no session to act for.
      assert.ok(
        shown === 'This form could not be accepted' || shown === 'Please sign in' || shown === 'Sign in',
        `${where} "${button}" showed "${shown}"`,
      );
      assert.equal(await accountState(service, account.apiKey), before, `${where} "${button}" changed the account`);
      await shoot(page, `07-${where}-${button.replace('Claim by ', '')}`);
    }
  }

  await page.goto(`${service.url}/account`);
  assert.is(page.url(), `${service.url}/account`, 'the browser is still signed in');
  assert.is(await heading(page), 'Your account');
  assert.is((await meOverRest(service, bearer(other.body.token))).status, 200, 'the other session is still alive');
});

test.run();
