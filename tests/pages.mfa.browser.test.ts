import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { AUTH, PASSWORD, bearer, registerAndVerify } from './helpers/auth.ts';
import { findChromium, launchBrowser, screenshotDir, type TestBrowser } from './helpers/browser.ts';
import { freePort, request, startTestService, type TestService } from './helpers/service.ts';

// First the browser itself, the one from the lockfile: it starts, renders a page, and offers the
// virtual authenticator the passkey tests need (the runtime every *.browser.test.ts relies on).
// Then docs/API.md, Pages: two-factor authentication in a real browser: the authenticator app set
// up from the account page (QR code, recovery codes and their download) and asked for at the
// next sign-in; passkeys made and used by Chromium's virtual authenticator through the pages'
// script, to sign in alone and as the second step. The service is reached as localhost: a
// browser refuses WebAuthn for an IP address.

type Context = { service: TestService; browser: TestBrowser; origin: string };
const test = suite<Context>("pages in Chromium (the lockfile's, with a virtual authenticator): authenticator app, recovery codes, passkeys, the second step of a sign-in");

const SHOTS = screenshotDir('pages-mfa');
const STEP_MS = 30_000;

test.before(async (context) => {
  const port = await freePort();
  context.origin = `http://localhost:${port}`;
  context.service = await startTestService({ PORT: String(port), PUBLIC_URL: context.origin });
  context.browser = await launchBrowser();
});
test.after(async ({ browser, service }) => {
  await browser?.close();
  await service?.close();
});

const shoot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const shootCard = (page: Page, selector: string, name: string) => page.locator(selector).screenshot({ path: join(SHOTS, `${name}.png`) });
const heading = async (page: Page) => (await page.textContent('h1'))?.trim();

/**
 * A browser page that records what the pages' CSP or script would complain about. A refused
 * form's page is a 4xx on purpose; Chromium logs it as a resource that failed to load.
 */
async function watchedPage(context: Context): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const opened = await context.browser.newPage();
  const problems: string[] = [];
  opened.page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  opened.page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4')) {
      problems.push(`console: ${message.text()}`);
    }
  });
  return { ...opened, problems };
}

async function signInWithPassword(page: Page, origin: string, email: string): Promise<void> {
  await page.goto(`${origin}/login`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

async function signOut(page: Page, origin: string): Promise<void> {
  await page.getByRole('button', { name: 'Sign out', exact: true }).first().click();
  await page.waitForURL(`${origin}/login`);
}

/** Chromium's virtual authenticator for this page: a platform one with resident keys that verifies its user. */
async function virtualAuthenticator(context: BrowserContext, page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });
  return { cdp, authenticatorId };
}

test('the browser: without CHROMIUM_PATH on Linux x64 it is the one @sparticuz/chromium ships, and it renders a page over HTTP', async ({ browser, origin }) => {
  if (!process.env.CHROMIUM_PATH && process.platform === 'linux' && process.arch === 'x64') {
    assert.match((await findChromium()).origin, /^@sparticuz\/chromium \d+\.\d+\.\d+$/);
  }
  const { context, page } = await browser.newPage();
  await page.goto(`${origin}/login`);
  assert.is(await heading(page), 'Sign in');
  assert.is(await page.evaluate(() => window.isSecureContext), true, 'localhost is a secure context, as WebAuthn needs');
  await context.close();
});

test('the browser: a CDP virtual authenticator (CTAP2, internal, resident keys, verified user) lets navigator.credentials.create make a passkey', async ({ browser, origin }) => {
  const { context, page } = await browser.newPage();
  await page.goto(`${origin}/login`);
  const { cdp, authenticatorId } = await virtualAuthenticator(context, page);

  const created = await page.evaluate(async () => {
    const credential = (await navigator.credentials.create({
      publicKey: {
        rp: { name: 'Gatehouse', id: 'localhost' },
        user: { id: crypto.getRandomValues(new Uint8Array(16)), name: 'passkey.user@example.com', displayName: 'Passkey User' },
        challenge: crypto.getRandomValues(new Uint8Array(32)),
        pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      },
    })) as PublicKeyCredential;
    return { type: credential.type, id: credential.id, attachment: credential.authenticatorAttachment };
  });
  assert.is(created.type, 'public-key');
  assert.is(created.attachment, 'platform');

  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  assert.is(credentials.length, 1);
  assert.is(credentials[0].rpId, 'localhost');
  assert.is(credentials[0].isResidentCredential, true);
  assert.is(Buffer.from(credentials[0].credentialId, 'base64').toString('base64url'), created.id, 'the page got the credential the authenticator holds');
  await context.close();
});

test('the authenticator app: set up from the account page, recovery codes saved, then asked for at the next sign-in', async (context) => {
  const { service, origin } = context;
  const email = 'ada.mfa@example.com';
  await registerAndVerify(service, email);
  const { context: browserContext, page, problems } = await watchedPage(context);
  await signInWithPassword(page, origin, email);
  await page.waitForURL(`${origin}/account`);

  await page.locator('#totp-setup-password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set up the authenticator app' }).click();
  await page.waitForURL(`${origin}/account/mfa/totp/setup#mfa`);
  assert.ok(await page.locator('#mfa .qr svg').isVisible(), 'the QR code is drawn');
  const box = await page.locator('#mfa .qr svg').boundingBox();
  assert.ok(box && box.width >= 150 && Math.abs(box.width - box.height) < 1, `a square QR code big enough to scan: ${JSON.stringify(box)}`);
  await shootCard(page, '#mfa', '01-account-2fa-qr');
  const secret = ((await page.textContent('#totp-secret')) ?? '').replace(/\s/g, '');
  assert.match(secret, /^[A-Z2-7]{32}$/);

  await page.getByLabel('Code from your authenticator app').fill('000000');
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.waitForURL(`${origin}/account/mfa/totp/enable#mfa`);
  assert.match((await page.textContent('#mfa')) ?? '', 'That is not the code the app shows now.');
  assert.is(((await page.textContent('#totp-secret')) ?? '').replace(/\s/g, ''), secret, 'the same key, to try again');
  await page.getByLabel('Code from your authenticator app').fill(totpCodeAt(secret, service.clock.now()));
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.waitForLoadState();
  const codes = (await page.locator('.codes code').allTextContents()).map((code) => code.trim());
  assert.is(codes.length, 10);
  assert.match((await page.textContent('#mfa')) ?? '', 'Save your recovery codes now');
  await shootCard(page, '#mfa', '02-recovery-codes');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download' }).click()]);
  assert.is(download.suggestedFilename(), 'gatehouse-recovery-codes.txt');
  const saved = readFileSync((await download.path())!, 'utf8');
  for (const code of codes) assert.match(saved, code);

  await page.getByRole('link', { name: 'I have saved them' }).click();
  await page.waitForURL(`${origin}/account`);
  assert.match((await page.textContent('#mfa-totp h3')) ?? '', 'On');
  await signOut(page, origin);

  service.clock.advance(STEP_MS);
  await signInWithPassword(page, origin, email);
  await page.waitForURL(`${origin}/login/mfa`);
  assert.is(await heading(page), 'One more step');
  assert.not.ok(await page.getByRole('button', { name: 'Use a passkey' }).isVisible(), 'no passkey on this account');
  await shoot(page, '03-login-second-step');
  await page.getByLabel('Code from your authenticator app').fill('000000');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${origin}/login/mfa`);
  assert.match((await page.textContent('[role="alert"]')) ?? '', 'The code is wrong or was already used.');
  await shoot(page, '04-login-second-step-wrong');
  await page.getByLabel('Code from your authenticator app').fill(totpCodeAt(secret, service.clock.now()));
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${origin}/account`);
  assert.is(await heading(page), 'Your account');
  assert.equal(problems, []);
  await browserContext.close();
});

test('passkeys: one added from the account page by the virtual authenticator, then "Sign in with a passkey", then as the second step', async (context) => {
  const { service, origin } = context;
  const email = 'grace.passkey@example.com';
  const account = await registerAndVerify(service, email);
  const { context: browserContext, page, problems } = await watchedPage(context);
  await page.goto(`${origin}/login`);
  const { cdp, authenticatorId } = await virtualAuthenticator(browserContext, page);
  assert.ok(await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible(), 'the script shows the button where passkeys work');
  await shoot(page, '05-login-with-passkey-button');

  await signInWithPassword(page, origin, email);
  await page.waitForURL(`${origin}/account`);
  await page.locator('#mfa-passkeys summary', { hasText: 'Add a passkey' }).click();
  await page.locator('#passkey-add-password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${origin}/account/mfa/passkeys/options#mfa`);
  await page.getByLabel('Name of the passkey (optional)').fill('Chromium on the test machine');
  await shootCard(page, '#mfa', '06-passkey-create');
  await page.getByRole('button', { name: 'Create passkey' }).click();
  await page.waitForURL(`${origin}/account/mfa/passkeys#mfa`);
  assert.match((await page.textContent('#mfa')) ?? '', 'Your passkey “Chromium on the test machine” is added.');
  assert.is(await page.locator('.codes code').count(), 10, 'the first factor brings recovery codes');
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  assert.is(credentials.length, 1);
  assert.is(credentials[0].rpId, 'localhost');

  await page.getByRole('link', { name: 'I have saved them' }).click();
  await page.waitForURL(`${origin}/account`);
  assert.match((await page.textContent('#passkey-list')) ?? '', 'Chromium on the test machine');
  assert.match((await page.textContent('#passkey-list')) ?? '', 'not used yet');
  await shootCard(page, '#mfa', '07-passkey-list');
  await shoot(page, '08-account-with-passkey');

  // A passkey alone signs in: the script asks for options, the authenticator signs, the form posts.
  await signOut(page, origin);
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await page.waitForURL(`${origin}/account`);
  assert.match((await page.textContent('#passkey-list')) ?? '', 'last used');

  // The password first: the account has a factor, so the second step asks for the passkey.
  await signOut(page, origin);
  await signInWithPassword(page, origin, email);
  await page.waitForURL(`${origin}/login/mfa`);
  assert.ok(await page.getByRole('button', { name: 'Use a passkey' }).isVisible());
  assert.ok(await page.getByLabel('Recovery code').isVisible(), 'no app: a recovery code is the other way');
  await shoot(page, '09-login-second-step-passkey');
  await page.getByRole('button', { name: 'Use a passkey' }).click();
  await page.waitForURL(`${origin}/account`);

  // A change confirmed by the passkey: the script fills the proof, the form does the rest.
  await page.getByLabel('Current password').fill(PASSWORD);
  await page.getByLabel('New password').fill('a new password from the passkey test');
  await page.locator('#password').getByRole('button', { name: 'Confirm with a passkey' }).click();
  await page.waitForURL(`${origin}/account?done=password`);
  const status = await request(service.url, 'GET', `${AUTH}/mfa`, { headers: bearer(account.apiKey) });
  assert.is(status.body.passkeys.length, 1);

  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator('#passkey-list summary', { hasText: 'Remove' }).click();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.is(overflow, 0, 'nothing sticks out sideways on a phone');
  await shootCard(page, '#mfa', '10-account-2fa-phone');
  assert.equal(problems, []);
  await browserContext.close();
});

test('without passkey support in the browser the passkey buttons stay hidden and the pages still work', async (context) => {
  const { origin } = context;
  const { context: browserContext, page, problems } = await watchedPage(context);
  await page.addInitScript(() => {
    // As an old browser: no WebAuthn at all.
    Object.defineProperty(window, 'PublicKeyCredential', { value: undefined });
  });
  await page.goto(`${origin}/login`);
  assert.not.ok(await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible());
  assert.ok(await page.getByRole('button', { name: 'Sign in', exact: true }).isVisible());
  assert.equal(problems, []);
  await browserContext.close();
});

test.run();
