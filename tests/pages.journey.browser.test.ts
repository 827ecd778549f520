import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bearer, login as loginOverRest, me as meOverRest, nextMail, registerForToken } from './helpers/auth.ts';
import { launchBrowser, screenshotDir, type TestBrowser } from './helpers/browser.ts';
import { startTestService, type TestService } from './helpers/service.ts';

// The pages (docs/API.md, Pages) in a real browser, without a line of JavaScript on the pages: the whole
// life of an account, from registration to signing out, by clicking what a person clicks.
// Each step is a test with an account and a browser page of its own, brought to where the
// step starts (confirmed, or signed in), so that no step needs the one before it.

type Context = { service: TestService; browser: TestBrowser };
const test = suite<Context>('pages in Chromium: register, confirm, sign in, key, sessions, password, sign out');

const SHOTS = screenshotDir('pages-journey');
const EMAIL = 'ada.journey@example.com';
const PASSWORD = 'first password of ada';
const NEW_PASSWORD = 'second password of ada';

test.before(async (context) => {
  context.service = await startTestService();
  context.browser = await launchBrowser();
});
test.after(async ({ browser, service }) => {
  await browser?.close();
  await service?.close();
});

const shoot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const heading = async (page: Page) => (await page.textContent('h1'))?.trim();

/** The link of the latest mail to `to` that holds one to `path`. */
async function mailedLink(service: TestService, to: string, seen: number, path: string): Promise<string> {
  const mail = await nextMail(service, to, seen, new RegExp(path));
  const link = new RegExp(`${service.url.replace(/\./g, '\\.')}${path}\\?token=[\\w-]+`).exec(mail.text);
  assert.ok(link, mail.text);
  return link[0];
}

/** Ada registered as `email` (over REST), on a page of its own that has just confirmed the address. */
async function confirmedPage({ service, browser }: Context, email: string): Promise<Page> {
  const token = await registerForToken(service, email, { name: 'Ada Lovelace', password: PASSWORD, company: 'Analytical Engines' });
  const { page } = await browser.newPage();
  await page.goto(`${service.url}/verify-email?token=${token}`);
  await page.getByRole('button', { name: 'Confirm e-mail address' }).click();
  await page.waitForLoadState();
  assert.is(await heading(page), 'E-mail address confirmed');
  return page;
}

/** The same, then signed in on that page: at /account. */
async function signedInPage(context: Context, email: string): Promise<Page> {
  const page = await confirmedPage(context, email);
  await page.goto(`${context.service.url}/login`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${context.service.url}/account`);
  return page;
}

test('register, then the mailed link confirms the address', async ({ service, browser }) => {
  const { page } = await browser.newPage();
  await page.goto(`${service.url}/register`);
  await shoot(page, '01-register');
  await page.getByLabel('Name').fill('Ada Lovelace');
  await page.getByLabel('E-mail address').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByLabel('Company (optional)').fill('Analytical Engines');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForLoadState();
  assert.is(await heading(page), 'Check your inbox');
  assert.match((await page.textContent('main')) ?? '', EMAIL);
  await shoot(page, '02-check-inbox');

  await page.goto(await mailedLink(service, EMAIL, 0, '/verify-email'));
  assert.is(await heading(page), 'Confirm your e-mail address');
  await shoot(page, '03-confirm-email');
  await page.getByRole('button', { name: 'Confirm e-mail address' }).click();
  await page.waitForLoadState();
  assert.is(await heading(page), 'E-mail address confirmed');
  await shoot(page, '04-confirmed');
});

test('sign in from the confirmation page; the account page shows the account with the key hidden', async (context) => {
  const { service } = context;
  const email = 'ada.signin@example.com';
  const page = await confirmedPage(context, email);
  await page.getByRole('link', { name: 'Sign in' }).first().click();
  await page.waitForURL(`${service.url}/login`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForLoadState();
  assert.match((await page.textContent('[role="alert"]')) ?? '', 'The e-mail address or password is wrong.');
  assert.is(await page.getByLabel('E-mail address').inputValue(), email, 'the address stays filled in');
  await shoot(page, '05-login-refused');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${service.url}/account`);
  const text = (await page.textContent('main')) ?? '';
  for (const shown of ['Ada Lovelace', email, 'Analytical Engines', 'free', 'user', 'This device', 'Signed in', 'Account created']) assert.match(text, shown);
  assert.not.ok(await page.locator('#api-key-value').count(), 'the key is hidden');
  await shoot(page, '06-account');
});

test('show the key, then rotate it: the page shows the new one, and the old one stops working', async (context) => {
  const { service } = context;
  const email = 'ada.key@example.com';
  const page = await signedInPage(context, email);
  await page.getByRole('button', { name: 'Show API key' }).click();
  await page.waitForLoadState();
  const key = (await page.textContent('#api-key-value'))?.trim() ?? '';
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.is((await meOverRest(service, bearer(key))).body.user.email, email);
  await shoot(page, '07-key-shown');

  await page.getByLabel('When you rotate, the current key').selectOption('0');
  await page.getByRole('button', { name: 'Rotate key' }).click();
  await page.waitForLoadState();
  const rotated = (await page.textContent('#api-key-value'))?.trim() ?? '';
  assert.match(rotated, /^[0-9a-f]{64}$/);
  assert.is.not(rotated, key);
  assert.match((await page.textContent('#api-key')) ?? '', 'The previous key stopped working.');
  assert.is((await meOverRest(service, bearer(key))).status, 401);
  assert.is((await meOverRest(service, bearer(rotated))).status, 200);
  await shoot(page, '08-key-rotated');
  // Away from the POST answer, the key is hidden again.
  await page.goto(`${service.url}/account`);
  assert.not.ok(await page.locator('#api-key-value').count());
});

test('a second browser signs in; the first signs it out from its sessions list', async (context) => {
  const { service, browser } = context;
  const email = 'ada.sessions@example.com';
  const page = await signedInPage(context, email);
  const { page: phone } = await browser.newPage();
  await phone.goto(`${service.url}/account`);
  await phone.waitForURL(`${service.url}/login?next=/account`);
  await phone.getByLabel('E-mail address').fill(email);
  await phone.getByLabel('Password').fill(PASSWORD);
  await phone.getByRole('button', { name: 'Sign in', exact: true }).click();
  await phone.waitForURL(`${service.url}/account`);

  await page.reload();
  const rows = page.locator('#sessions li');
  assert.is(await rows.count(), 2);
  await shoot(page, '09-two-sessions');
  await rows.filter({ hasNotText: 'This device' }).getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${service.url}/account?done=session`);
  assert.match((await page.textContent('main')) ?? '', 'That session is signed out.');
  assert.is(await page.locator('#sessions li').count(), 1);
  await shoot(page, '10-session-revoked');

  await phone.reload();
  await phone.waitForURL(`${service.url}/login?next=/account`);
  assert.is(await heading(phone), 'Sign in');
  await phone.context().close();
});

test('change the password: a wrong current one is refused in place; then the new one is the password', async (context) => {
  const { service } = context;
  const email = 'ada.password@example.com';
  const page = await signedInPage(context, email);
  await page.getByLabel('Current password').fill('not the password');
  await page.getByLabel('New password').fill(NEW_PASSWORD);
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.waitForLoadState();
  assert.match((await page.textContent('#password')) ?? '', 'The current password is wrong.');
  await shoot(page, '11-password-refused');
  await page.getByLabel('Current password').fill(PASSWORD);
  await page.getByLabel('New password').fill(NEW_PASSWORD);
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.waitForURL(`${service.url}/account?done=password`);
  assert.match((await page.textContent('main')) ?? '', 'Your password is changed.');
  assert.is((await loginOverRest(service, email, PASSWORD)).status, 401);
  assert.is((await loginOverRest(service, email, NEW_PASSWORD)).status, 200);
  await shoot(page, '12-password-changed');
});

test('sign out: back to the sign-in page, and the account page is closed to this browser', async (context) => {
  const { service, browser } = context;
  const email = 'ada.signout@example.com';
  const page = await signedInPage(context, email);
  const apiKey: string = (await loginOverRest(service, email, PASSWORD)).body.user.api_key;
  await page.getByRole('button', { name: 'Sign out' }).first().click();
  await page.waitForURL(`${service.url}/login`);
  await shoot(page, '13-signed-out');
  await page.goto(`${service.url}/account`);
  await page.waitForURL(`${service.url}/login?next=/account`);
  assert.is((await meOverRest(service, bearer(apiKey))).status, 200, 'the key is not a session: it keeps working');

  const { context: phoneContext, page: phone } = await browser.browser.newContext({ viewport: { width: 390, height: 844 } }).then(async (ctx) => ({ context: ctx, page: await ctx.newPage() }));
  await phone.goto(`${service.url}/login`);
  await shoot(phone, '14-login-phone');
  await phone.getByLabel('E-mail address').fill(email);
  await phone.getByLabel('Password').fill(PASSWORD);
  await phone.getByRole('button', { name: 'Sign in', exact: true }).click();
  await phone.waitForURL(`${service.url}/account`);
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.is(overflow, 0, 'nothing sticks out sideways on a phone');
  await shoot(phone, '15-account-phone');
  await phoneContext.close();
});

test.run();
