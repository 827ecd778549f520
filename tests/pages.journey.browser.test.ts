import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bearer, login as loginOverRest, me as meOverRest, nextMail, registerAndVerify, registerForToken, type Account } from './helpers/auth.ts';
import { launchBrowser, screenshotDir, type TestBrowser } from './helpers/browser.ts';
import { startServiceWithProviders, type WithProviders } from './helpers/identity-providers.ts';
import { request, type TestService } from './helpers/service.ts';

// The pages (docs/API.md, Pages) in a real browser, without a line of JavaScript on the pages: the whole
// life of an account, from registration to signing out, by clicking what a person clicks; and
// the sign-up and sign-in with an identity provider (docs/API.md, Identity providers):
// "Continue with …" on /login, the OpenID Provider's own login and consent pages, and back
// to the account page, or to /login with the reason. And the two ways a browser reaches the
// pages without having opened them first: a mailed reset link, and another site's form
// aimed at the account.
// Each step is a test with an account and a browser page of its own, brought to where the
// step starts (confirmed, or signed in), so that no step needs the one before it.

type Attacker = { server: Server; url: string };
type Context = {
  service: TestService;
  env: WithProviders;
  browser: TestBrowser;
  /** Grace, registered over REST, and a page of hers (the recovery tests). */
  account: Account;
  page: Page;
  /** Cross-site: `localhost` against the service's 127.0.0.1, so SameSite=Lax keeps the cookie home. */
  crossSite: Attacker;
  /** Same-site, another origin (127.0.0.1, another port): the browser does send the cookie. */
  sameSite: Attacker;
};
const test = suite<Context>('pages in Chromium: register, confirm, sign in, key, sessions, password, sign out; Continue with a provider; reset from the mailed link; forms from other sites change nothing');

const SHOTS = screenshotDir('pages-journey');
const EMAIL = 'ada.journey@example.com';
const PASSWORD = 'first password of ada';
const NEW_PASSWORD = 'second password of ada';

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
  context.env = await startServiceWithProviders({}, { port: true });
  context.service = context.env.service;
  context.account = await registerAndVerify(context.service, 'grace.recovery@example.com', { name: 'Grace Hopper' });
  context.crossSite = await startAttacker('localhost', context.service.url);
  context.sameSite = await startAttacker('127.0.0.1', context.service.url);
  context.browser = await launchBrowser();
  context.page = (await context.browser.newPage()).page;
});
test.after(async ({ browser, env, crossSite, sameSite }) => {
  await browser?.close();
  crossSite?.server.close();
  sameSite?.server.close();
  await env?.close();
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
  await shoot(page, '20-login-with-providers');
  await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Continue with Acme SSO' }).click()]);
  assert.ok(page.url().startsWith(env.op.issuer), page.url());
  await atProvider(page, 'sub-chromium');
  assert.is(new URL(page.url()).pathname, '/account');
  assert.is((await page.textContent('h1'))?.trim(), 'Your account');
  const connected = (await page.textContent('#connected')) ?? '';
  assert.match(connected, 'Acme SSO');
  assert.match(connected, 'Set a password');
  assert.match((await page.textContent('main')) ?? '', 'Signed in with an identity provider');
  await shoot(page, '21-account-connected');
});

test('a provider that did not verify the address: back on /login, which says why', async ({ env, browser }) => {
  env.op.people.set('sub-chromium-unverified', { email: 'chromium.unverified@example.com', email_verified: false });
  const { page } = await browser.newPage();
  await page.goto(`${env.service.url}/register`);
  await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Continue with Acme SSO' }).click()]);
  await atProvider(page, 'sub-chromium-unverified');
  assert.is(new URL(page.url()).pathname, '/login');
  assert.match((await page.textContent('main')) ?? '', 'Acme SSO has not verified your e-mail address');
  await shoot(page, '22-login-refused');
});

const RESET_PASSWORD = 'a password chosen after forgetting';

test('forgot password: the page sends a link; the link opens a form; the new password is the password', async ({ service, page, account }) => {
  await page.goto(`${service.url}/login`);
  await page.getByRole('link', { name: /forgot/i }).click();
  await page.waitForURL(`${service.url}/forgot-password`);
  await shoot(page, '31-forgot');
  await page.getByLabel('E-mail address').fill(account.email);
  await page.getByRole('button', { name: 'Send the link' }).click();
  await page.waitForLoadState();
  assert.match((await page.textContent('main')) ?? '', 'Check your inbox');
  await shoot(page, '32-forgot-sent');

  const mail = await nextMail(service, account.email, 0, /reset-password/);
  const link = new RegExp(`${service.url.replace(/\./g, '\\.')}/reset-password\\?token=[\\w-]+`).exec(mail.text);
  assert.ok(link, mail.text);
  await page.goto(link[0]);
  assert.is(await heading(page), 'Choose a new password');
  assert.is((await loginOverRest(service, account.email, account.password)).status, 200, 'opening the link changed nothing');
  await shoot(page, '33-reset-form');

  await page.getByLabel('New password').fill('short');
  await page.getByRole('button', { name: 'Set new password' }).click();
  await page.waitForLoadState();
  assert.is(await heading(page), 'Choose a new password', 'a bad password keeps the form, with the same link');
  await shoot(page, '34-reset-refused');
  await page.getByLabel('New password').fill(RESET_PASSWORD);
  await page.getByRole('button', { name: 'Set new password' }).click();
  await page.waitForLoadState();
  assert.is(await heading(page), 'Password changed');
  await shoot(page, '35-reset-done');
  assert.is((await loginOverRest(service, account.email, account.password)).status, 401);
  assert.is((await loginOverRest(service, account.email, RESET_PASSWORD)).status, 200);
  assert.is((await meOverRest(service, bearer(account.token))).status, 401, 'the reset ended every session');

  // The link was used: opening it again shows the form, but sending it is refused.
  await page.goto(link[0]);
  await page.getByLabel('New password').fill('yet another password');
  await page.getByRole('button', { name: 'Set new password' }).click();
  await page.waitForLoadState();
  assert.is(await heading(page), 'Link no longer valid');
  assert.is((await loginOverRest(service, account.email, RESET_PASSWORD)).status, 200);
  await shoot(page, '36-reset-link-used');
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
      await shoot(page, `37-${where}-${button.replace('Claim by ', '')}`);
    }
  }

  await page.goto(`${service.url}/account`);
  assert.is(page.url(), `${service.url}/account`, 'the browser is still signed in');
  assert.is(await heading(page), 'Your account');
  assert.is((await meOverRest(service, bearer(other.body.token))).status, 200, 'the other session is still alive');
});

test.run();
