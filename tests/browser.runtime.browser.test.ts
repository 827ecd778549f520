import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { findChromium, launchBrowser, type TestBrowser } from './helpers/browser.ts';

type Context = { browser: TestBrowser; server: Server; origin: string };
const test = suite<Context>('the browser from the lockfile: it starts, renders a local page, and offers the virtual authenticator passkey tests need');

const PAGE = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Runtime</title></head><body><h1>served locally</h1></body></html>';

test.before(async (context) => {
  context.server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  });
  await new Promise<void>((resolve) => context.server.listen(0, '127.0.0.1', () => resolve()));
  // localhost, not 127.0.0.1: WebAuthn needs a secure context and an RP ID that is a domain.
  context.origin = `http://localhost:${(context.server.address() as AddressInfo).port}`;
  context.browser = await launchBrowser();
});
test.after(async (context) => {
  await context.browser?.close();
  context.server?.close();
});

test('without CHROMIUM_PATH on Linux x64 the browser is the one @sparticuz/chromium ships, and it renders a page over HTTP', async ({ browser, origin }) => {
  if (!process.env.CHROMIUM_PATH && process.platform === 'linux' && process.arch === 'x64') {
    assert.match((await findChromium()).origin, /^@sparticuz\/chromium \d+\.\d+\.\d+$/);
  }
  const { context, page } = await browser.newPage();
  await page.goto(`${origin}/`);
  assert.is(await page.textContent('h1'), 'served locally');
  assert.is(await page.evaluate(() => window.isSecureContext), true);
  await context.close();
});

test('a CDP virtual authenticator (CTAP2, internal, resident keys, verified user) lets navigator.credentials.create make a passkey', async ({ browser, origin }) => {
  const { context, page } = await browser.newPage();
  await page.goto(`${origin}/`);
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });

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

test.run();
