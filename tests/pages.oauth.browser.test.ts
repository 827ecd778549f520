import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { launchBrowser, screenshotDir, type TestBrowser } from './helpers/browser.ts';
import { startServiceWithProviders, type WithProviders } from './helpers/identity-providers.ts';

// Sign-in with an identity provider in a real browser (docs/API.md, Identity providers):
// "Continue with …" on /login, the OpenID Provider's own login and consent pages, and back
// to the account page, or to /login with the reason.

type Context = { env: WithProviders; browser: TestBrowser };
const test = suite<Context>('pages in Chromium: Continue with an identity provider');

const SHOTS = screenshotDir('pages-oauth');

test.before(async (context) => {
  context.env = await startServiceWithProviders();
  context.browser = await launchBrowser();
});
test.after(async ({ browser, env }) => {
  await browser?.close();
  await env?.close();
});

const shoot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

/** At the provider: sign in as `sub` on its login page, then grant its consent page. */
async function atProvider(page: Page, sub: string): Promise<void> {
  await page.locator('input[name="login"]').fill(sub);
  await page.locator('input[name="password"]').fill('any');
  await Promise.all([page.waitForNavigation(), page.locator('button[type="submit"]').first().click()]);
  await Promise.all([page.waitForNavigation(), page.locator('button[type="submit"]').first().click()]);
  await page.waitForLoadState();
}

test('Continue with Acme SSO signs a new person up and lands on the account page, connected', async ({ env, browser }) => {
  env.op.people.set('sub-chromium', { email: 'chromium.person@example.com', email_verified: true, name: 'Chromium Person' });
  const { page } = await browser.newPage();
  await page.goto(`${env.service.url}/login`);
  await shoot(page, '01-login-with-providers');
  await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Continue with Acme SSO' }).click()]);
  assert.ok(page.url().startsWith(env.op.issuer), page.url());
  await atProvider(page, 'sub-chromium');
  assert.is(new URL(page.url()).pathname, '/account');
  assert.is((await page.textContent('h1'))?.trim(), 'Your account');
  const connected = (await page.textContent('#connected')) ?? '';
  assert.match(connected, 'Acme SSO');
  assert.match(connected, 'Set a password');
  assert.match((await page.textContent('main')) ?? '', 'Signed in with an identity provider');
  await shoot(page, '02-account-connected');
});

test('a provider that did not verify the address: back on /login, which says why', async ({ env, browser }) => {
  env.op.people.set('sub-chromium-unverified', { email: 'chromium.unverified@example.com', email_verified: false });
  const { page } = await browser.newPage();
  await page.goto(`${env.service.url}/register`);
  await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Continue with Acme SSO' }).click()]);
  await atProvider(page, 'sub-chromium-unverified');
  assert.is(new URL(page.url()).pathname, '/login');
  assert.match((await page.textContent('main')) ?? '', 'Acme SSO has not verified your e-mail address');
  await shoot(page, '03-login-refused');
});

test.run();
