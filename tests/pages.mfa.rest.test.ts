import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { AUTH, PASSWORD, bearer, login, registerAndVerify, type Account } from './helpers/auth.ts';
import { assertPageHeaders, createVisitor, inputValue, PAGE_CSP, SCRIPTED_PAGE_CSP, signedInVisitor, type PageResult, type Visitor } from './helpers/pages.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { createSoftAuthenticator, type SoftAuthenticator } from './helpers/webauthn.ts';

// docs/API.md, Pages: the second step of a sign-in (/login/mfa), the sign-in by passkey
// (/login/passkey), and the account page's "Two-factor authentication" card with the proof
// its sensitive forms ask for, as a browser without JavaScript sees them; passkey answers come
// from the software authenticator, as the passkey script would post them.

type Context = { service: TestService; secrets: Set<string> };
const test = suite<Context>('pages: second step of a sign-in, passkey sign-in, the two-factor card and step-up');

test.before(async (context) => {
  context.service = await startTestApp();
  context.secrets = new Set([PASSWORD]);
});
test.after(async ({ service }) => {
  await service?.close();
});

const STEP_MS = 30_000;
const RECOVERY_CODE = /[2-9a-hjkmnp-tw-z]{5}-[2-9a-hjkmnp-tw-z]{5}/g;
const STEP_UP_TEXT = 'Enter a code from your authenticator app or a recovery code to confirm.';

const codeNow = (service: TestService, secret: string) => totpCodeAt(secret, service.clock.now());
/** The next 30 s step, so that a new code is not a replay of the last one. */
const nextStep = (service: TestService) => service.clock.advance(STEP_MS);
const unescape = (text: string) => text.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The WebAuthn options a form of the page carries for the passkey script. */
function dataOptions(html: string, action: string): any {
  const match = new RegExp(`<form method="post" action="${action.replace(/[/.]/g, '\\$&')}" data-options="([^"]*)"`).exec(html);
  assert.ok(match, `a form to ${action} with options`);
  return JSON.parse(unescape(match[1]));
}

/** The codes of the "save your recovery codes" list. */
const shownCodes = (html: string) => [.../<ol class="codes">(.*?)<\/ol>/s.exec(html)?.[1].matchAll(RECOVERY_CODE) ?? []].map((match) => match[0]);

/** The secret of the setup the page shows, as the reader would type it (spaces dropped). */
const shownSecret = (html: string) => /<code class="secret" id="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(html)?.[1].replace(/ /g, '');

/** The pending sign-in cookie: its name and attributes, and the sign-in token it holds. */
function pendingCookie(answer: PageResult): { line: string; token: string } {
  const line = answer.headers.getSetCookie().find((cookie) => cookie.startsWith('svc_mfa='));
  assert.ok(line, 'the svc_mfa cookie is set');
  return { line, token: line.slice('svc_mfa='.length).split(';')[0].split('.')[0] };
}

/** Through the card, as a person would: set up, scan (read the secret), turn on with a code; the codes shown once. */
async function turnOnApp(context: Context, visitor: Visitor): Promise<{ secret: string; codes: string[] }> {
  const { service } = context;
  await visitor.get('/account');
  const setup = await visitor.post('/account/mfa/totp/setup', { password: PASSWORD });
  assert.is(setup.status, 200, setup.text);
  const secret = shownSecret(setup.text)!;
  assert.match(secret, /^[A-Z2-7]{32}$/);
  const enabled = await visitor.post('/account/mfa/totp/enable', { code: codeNow(service, secret), otpauth_url: inputValue(setup.text, 'otpauth_url')! });
  assert.is(enabled.status, 200, enabled.text);
  const codes = shownCodes(enabled.text);
  assert.is(codes.length, 10);
  for (const value of [secret, ...codes]) context.secrets.add(value);
  nextStep(service);
  return { secret, codes };
}

async function signedInWithApp(context: Context, email: string) {
  const account = await registerAndVerify(context.service, email);
  const visitor = await signedInVisitor(context.service, account.email, account.password);
  context.secrets.add(visitor.cookies.get('svc_token')!).add(account.token).add(account.apiKey);
  return { account, visitor, ...(await turnOnApp(context, visitor)) };
}

/** The password on /login of a fresh browser: 303 to the second step, with the pending sign-in in its cookie. */
async function firstStep(context: Context, account: Account, next?: string) {
  const visitor = createVisitor(context.service);
  await visitor.get(next ? `/login?next=${encodeURIComponent(next)}` : '/login');
  const answer = await visitor.post('/login', { email: account.email, password: account.password, ...(next ? { next } : {}) });
  assert.is(answer.status, 303, answer.text);
  const pending = pendingCookie(answer);
  context.secrets.add(pending.token);
  assert.not.ok(visitor.cookies.has('svc_token'), 'no session before the second step');
  return { visitor, answer, pending };
}

test('password right, app on: 303 to /login/mfa; the sign-in token is in an HttpOnly cookie only, never in a URL or page', async (context) => {
  const { service } = context;
  const { account, secret } = await signedInWithApp(context, 'pages.mfa.step@example.com');
  const { visitor, answer, pending } = await firstStep(context, account, '/account?done=password');
  assert.is(answer.location, '/login/mfa?next=%2Faccount%3Fdone%3Dpassword');
  assert.match(pending.line, /; Path=\/; HttpOnly; SameSite=Lax; Max-Age=300$/);
  assert.match(pending.token, /^[\w-]{43}$/);
  assert.not.match(answer.location!, pending.token);

  const page = await visitor.get(answer.location!);
  assert.is(page.status, 200);
  assertPageHeaders(page);
  assert.is(page.headers.get('content-security-policy'), PAGE_CSP, 'an account without passkeys: no script');
  assert.not.match(page.text, pending.token);
  assert.match(page.text, /<label for="code">Code from your authenticator app<\/label>/);
  assert.match(page.text, /<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required /);
  assert.match(page.text, 'A recovery code works here too.');
  assert.is(inputValue(page.text, 'next'), '/account?done=password');

  const wrongCode = String((Number(codeNow(service, secret)) + 1) % 1_000_000).padStart(6, '0');
  const wrong = await visitor.post('/login/mfa', { code: wrongCode, next: '/account?done=password' });
  assert.is(wrong.status, 401);
  assert.match(wrong.text, 'The code is wrong or was already used.');
  assert.ok(visitor.cookies.has('svc_mfa'), 'a wrong code keeps the sign-in pending');
  assert.not.ok(visitor.cookies.has('svc_token'));
});

test('the right code signs in: session cookie set, pending cookie cleared, 303 to next', async (context) => {
  const { service } = context;
  const { account, secret } = await signedInWithApp(context, 'pages.mfa.code@example.com');
  const { visitor } = await firstStep(context, account, '/account');
  await visitor.get('/login/mfa?next=%2Faccount');
  const wrong = await visitor.post('/login/mfa', { code: '000000', next: '/account' });
  assert.is(wrong.status, 401);
  const right = await visitor.post('/login/mfa', { code: codeNow(service, secret), next: '/account' });
  assert.is(right.status, 303, right.text);
  assert.is(right.location, '/account');
  assert.ok(right.headers.getSetCookie().some((line) => line.startsWith('svc_mfa=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0')));
  assert.ok(visitor.cookies.get('svc_token'), 'signed in');
  context.secrets.add(visitor.cookies.get('svc_token')!);
  assert.is((await visitor.get('/account')).status, 200);
  // A second use of the same sign-in finds it gone.
  assert.is((await visitor.get('/login/mfa')).location, '/login');
});

test('a recovery code works in place of the app\'s code, on its own variant of the page', async (context) => {
  const { account, codes } = await signedInWithApp(context, 'pages.mfa.recovery@example.com');
  const { visitor } = await firstStep(context, account);
  const page = await visitor.get('/login/mfa?use=recovery');
  assert.match(page.text, /<label for="code">Recovery code<\/label>/);
  assert.not.match(page.text, 'inputmode="numeric"');
  assert.is(inputValue(page.text, 'use'), 'recovery');
  const answer = await visitor.post('/login/mfa', { code: codes[0], use: 'recovery' });
  assert.is(answer.status, 303, answer.text);
  assert.is(answer.location, '/account');
  context.secrets.add(visitor.cookies.get('svc_token')!);
});

test('without a pending sign-in, or after it expired or five wrong codes: back to /login with a fixed notice', async (context) => {
  const { service } = context;
  const { account, secret } = await signedInWithApp(context, 'pages.mfa.expired@example.com');
  const stranger = createVisitor(service);
  assert.is((await stranger.get('/login/mfa')).location, '/login');
  assert.is((await stranger.get('/login/mfa?next=%2Faccount')).location, '/login?next=%2Faccount');
  await stranger.get('/login');
  assert.is((await stranger.post('/login/mfa', { code: '123456' })).location, '/login?notice=expired');

  const late = await firstStep(context, account);
  service.clock.advance(5 * 60_000 + 1000);
  const expired = await late.visitor.post('/login/mfa', { code: codeNow(service, secret) });
  assert.is(expired.status, 303);
  assert.is(expired.location, '/login?notice=expired');
  assert.not.ok(late.visitor.cookies.has('svc_mfa'), 'the dead sign-in is cleared');
  const notice = await late.visitor.get(expired.location!);
  assert.match(notice.text, 'Your sign-in expired: sign in again.');
  for (const odd of ['<script>alert(1)</script>', 'constructor', '__proto__']) {
    const shown = await late.visitor.get(`/login?notice=${encodeURIComponent(odd)}`);
    assert.is(shown.status, 200);
    assert.not.match(shown.text, 'alert(1)');
    assert.not.match(shown.text, 'class="alert');
  }

  nextStep(service);
  const guessed = await firstStep(context, account);
  await guessed.visitor.get('/login/mfa');
  for (let i = 0; i < 5; i++) assert.is((await guessed.visitor.post('/login/mfa', { code: String(100000 + i) })).status, 401);
  const spent = await guessed.visitor.post('/login/mfa', { code: codeNow(service, secret) });
  assert.is(spent.location, '/login?notice=expired', 'five wrong codes void the sign-in');
});

test('the card: set up shows a QR code drawn as SVG and the key; a wrong first code shows them again; the right one, ten codes once', async (context) => {
  const { service } = context;
  const account = await registerAndVerify(service, 'pages.mfa.card@example.com');
  const visitor = await signedInVisitor(service, account.email, account.password);
  const before = await visitor.get('/account');
  assertPageHeaders(before);
  assert.is(before.headers.get('content-security-policy'), PAGE_CSP, 'no passkeys: the account page runs no script');
  assert.match(before.text, '<h2 id="mfa-title">Two-factor authentication</h2>');
  assert.match(before.text, '<form method="post" action="/account/mfa/totp/setup#mfa">');
  assert.not.match(before.text, 'name="code"', 'no factor, no code field on the sensitive forms');

  assert.match((await visitor.post('/account/mfa/totp/setup', { password: 'not the password' })).text, 'The password is wrong. Nothing was changed.');
  const setup = await visitor.post('/account/mfa/totp/setup', { password: PASSWORD });
  assert.is(setup.status, 200);
  assertPageHeaders(setup);
  assert.match(setup.text, /<div class="qr" role="img" aria-label="[^"]+"><svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 \d+ \d+"/);
  const secret = shownSecret(setup.text)!;
  context.secrets.add(secret);
  const url = new URL(inputValue(setup.text, 'otpauth_url')!);
  assert.is(url.searchParams.get('secret'), secret);

  const wrong = await visitor.post('/account/mfa/totp/enable', { code: '000000', otpauth_url: url.href });
  assert.is(wrong.status, 400);
  assert.match(wrong.text, 'That is not the code the app shows now.');
  assert.is(shownSecret(wrong.text), secret, 'the same key again, to try another code');
  assert.match(wrong.text, '<svg');
  const forged = await visitor.post('/account/mfa/totp/enable', { code: '000000', otpauth_url: 'javascript:alert(1)' });
  assert.is(forged.status, 400);
  assert.not.match(forged.text, 'alert(1)');

  const enabled = await visitor.post('/account/mfa/totp/enable', { code: codeNow(service, secret), otpauth_url: url.href });
  assert.is(enabled.status, 200);
  const codes = shownCodes(enabled.text);
  assert.is(codes.length, 10);
  for (const code of codes) context.secrets.add(code);
  assert.match(enabled.text, 'Save your recovery codes now');
  const download = /<a class="button" download="gatehouse-recovery-codes.txt" href="([^"]+)">/.exec(enabled.text);
  assert.ok(download, 'a download link');
  const file = decodeURIComponent(unescape(download[1]).slice('data:text/plain;charset=utf-8,'.length));
  for (const code of codes) assert.match(file, code);

  const after = await visitor.get('/account');
  for (const code of codes) assert.not.match(after.text, code, 'shown once');
  assert.not.match(after.text, secret);
  assert.match(after.text, /Authenticator app <span class="badge badge-good">On<\/span>/);
  assert.match(after.text, '10 of 10 left.');
  const status = await request(service.url, 'GET', `${AUTH}/mfa`, { headers: bearer(account.token) });
  assert.is(status.body.totp, true);
});

test('step-up: with the app on, the sensitive forms show a code field, and the server asks for it', async (context) => {
  const { service } = context;
  const { account, visitor, secret, codes } = await signedInWithApp(context, 'pages.mfa.stepup@example.com');
  const page = await visitor.get('/account');
  for (const id of ['password-code', 'email-code', 'rotate-code', 'delete-code']) {
    assert.match(page.text, new RegExp(`<label for="${id}">Code from your authenticator app \\(or a recovery code\\)</label><input id="${id}" name="code" type="text" autocomplete="one-time-code"`));
  }
  const change = { current_password: PASSWORD, new_password: 'a new password for the step' };
  const missing = await visitor.post('/account/password', change);
  assert.is(missing.status, 403);
  assert.match(/<section class="card" id="password".*?<\/section>/s.exec(missing.text)![0], STEP_UP_TEXT);
  const wrong = await visitor.post('/account/password', { ...change, code: '000000' });
  assert.is(wrong.status, 400);
  assert.match(wrong.text, 'That code is wrong, already used or expired');
  assert.match(wrong.text, 'Code from your authenticator app (or a recovery code) is wrong, already used or expired.');
  assert.not.match(wrong.text, 'value="000000"', 'a code typed is not written back');
  assert.is((await login(service, account.email)).status, 403, 'the password did not change');

  const right = await visitor.post('/account/password', { ...change, code: codeNow(service, secret) });
  assert.is(right.status, 303, right.text);
  assert.is(right.location, '/account?done=password');
  // A password change ends the step-up: the next change asks for a code again.
  await visitor.get('/account');
  assert.is((await visitor.post('/account/api-key/rotate', { grace_seconds: '0' })).status, 403);
  service.clock.advance(30_000);
  const proved = await visitor.post('/account/api-key/rotate', { grace_seconds: '0', code: codeNow(service, secret) });
  assert.is(proved.status, 200, proved.text.slice(0, 300));
  // Stepped up for five minutes: the next change needs no code.
  await visitor.get('/account');
  const rotated = await visitor.post('/account/api-key/rotate', { grace_seconds: '0' });
  assert.is(rotated.status, 200);
  assert.match(rotated.text, 'New API key made');

  service.clock.advance(5 * 60_000 + 1000);
  await visitor.get('/account');
  assert.is((await visitor.post('/account/api-key/rotate', { grace_seconds: '0' })).status, 403);
  const withCode = await visitor.post('/account/api-key/rotate', { grace_seconds: '0', code: codes[0] });
  assert.is(withCode.status, 200, 'a recovery code serves as the proof too');
});

test('new recovery codes (password and code) replace the old; turning the app off needs both', async (context) => {
  const { service } = context;
  const { account, visitor, secret, codes } = await signedInWithApp(context, 'pages.mfa.regen@example.com');
  await visitor.get('/account');
  const missing = await visitor.post('/account/mfa/recovery-codes', { password: PASSWORD });
  assert.is(missing.status, 403);
  assert.match(missing.text, 'Enter a code from your authenticator app or a recovery code to confirm.');
  const made = await visitor.post('/account/mfa/recovery-codes', { password: PASSWORD, code: codeNow(service, secret) });
  assert.is(made.status, 200, made.text);
  const fresh = shownCodes(made.text);
  assert.is(fresh.length, 10);
  for (const code of fresh) context.secrets.add(code);
  assert.match(made.text, 'New recovery codes are made: the older ones no longer work.');
  nextStep(service);

  await visitor.get('/account');
  const old = await visitor.post('/account/mfa/totp/disable', { password: PASSWORD, code: codes[1] });
  assert.is(old.status, 400, 'an old code is void');
  const off = await visitor.post('/account/mfa/totp/disable', { password: PASSWORD, code: fresh[0] });
  assert.is(off.status, 303);
  assert.is(off.location, '/account?done=totp-off#mfa');
  const page = await visitor.get(off.location!.replace('#mfa', ''));
  assert.match(page.text, 'The authenticator app is off.');
  assert.match(page.text, /Authenticator app <span class="badge">Off<\/span>/);
  assert.not.match(page.text, 'name="code"');
  assert.is((await login(service, account.email)).status, 200, 'signing in asks for no code any more');
});

/** An account with a passkey added through the card, as the script would add it: the options on the page, the browser's answer posted. */
async function addPasskeyOnPage(context: Context, visitor: Visitor, authenticator: SoftAuthenticator, fields: Record<string, string> = {}) {
  await visitor.get('/account');
  const options = await visitor.post('/account/mfa/passkeys/options', { password: PASSWORD, ...fields });
  assert.is(options.status, 200, options.text);
  assertPageHeaders(options);
  assert.is(options.headers.get('content-security-policy'), SCRIPTED_PAGE_CSP);
  const creation = dataOptions(options.text, '/account/mfa/passkeys#mfa');
  return visitor.post('/account/mfa/passkeys', { name: 'Work laptop', response: JSON.stringify(authenticator.register(creation)) });
}

test('passkeys on the card: add (the first brings recovery codes), list, sign in with one alone, remove with a proof', async (context) => {
  const { service } = context;
  const account = await registerAndVerify(service, 'pages.mfa.passkey@example.com');
  const visitor = await signedInVisitor(service, account.email, account.password);
  const authenticator = createSoftAuthenticator(service.url);
  const added = await addPasskeyOnPage(context, visitor, authenticator);
  assert.is(added.status, 200, added.text);
  assert.match(added.text, 'Your passkey “Work laptop” is added.');
  const codes = shownCodes(added.text);
  assert.is(codes.length, 10);
  for (const code of codes) context.secrets.add(code);

  const page = await visitor.get('/account');
  assert.is(page.headers.get('content-security-policy'), SCRIPTED_PAGE_CSP, 'passkeys can confirm changes: the script is loaded');
  assert.match(page.text, /<span class="row-name">Work laptop<\/span>/);
  assert.match(page.text, /added \d+ \w+ \d{4}, \d\d:\d\d UTC · not used yet/);
  assert.match(page.text, '<label for="password-code">Recovery code</label>', 'no app: the code field takes a recovery code');
  assert.match(page.text, 'data-passkey="authenticate"');

  // The sign-in page's script asks for options over REST; the answer is posted to the page.
  const stranger = createVisitor(service);
  const login = await stranger.get('/login');
  assert.is(login.headers.get('content-security-policy'), SCRIPTED_PAGE_CSP);
  assert.match(login.text, '<div class="passkey-area" data-passkey-area="true" hidden>');
  const options = await request(service.url, 'POST', `${AUTH}/login/passkey/options`, { json: {} });
  const answer = await stranger.post('/login/passkey', { response: JSON.stringify(authenticator.authenticate(options.body.options)), next: '/account?done=x' });
  assert.is(answer.status, 303, answer.text);
  assert.is(answer.location, '/account?done=x');
  context.secrets.add(stranger.cookies.get('svc_token')!);
  const refused = await createVisitor(service).get('/login').then(async () => {
    const again = createVisitor(service);
    await again.get('/login');
    return again.post('/login/passkey', { response: JSON.stringify(authenticator.authenticate(options.body.options)) });
  });
  assert.is(refused.status, 401, 'the same challenge twice');
  assert.match(refused.text, 'That passkey could not be used.');

  // Remove: the password and a proof; a wrong passkey id is said, not a failure.
  const id = /name="passkey_id" value="([^"]+)"/.exec(page.text)![1];
  await visitor.get('/account');
  const noProof = await visitor.post('/account/mfa/passkeys/remove', { passkey_id: id, password: PASSWORD });
  assert.is(noProof.status, 403);
  assert.match(noProof.text, STEP_UP_TEXT);
  const unknown = await visitor.post('/account/mfa/passkeys/remove', { passkey_id: randomUUID(), password: PASSWORD, code: codes[0] });
  assert.is(unknown.status, 404, unknown.text);
  assert.match(unknown.text, 'That passkey was already removed.');
  const removed = await visitor.post('/account/mfa/passkeys/remove', { passkey_id: id, password: PASSWORD });
  assert.is(removed.status, 303, 'the recovery code stepped the session up a moment ago');
  assert.is(removed.location, '/account?done=passkey-removed#mfa');
  const status = await request(service.url, 'GET', `${AUTH}/mfa`, { headers: bearer(account.token) });
  assert.equal(status.body, { success: true, totp: false, passkeys: [], recovery_codes_left: 0 });
});

test('a passkey as the second step: the page carries options for the account\'s passkeys; its answer signs in', async (context) => {
  const { service } = context;
  const account = await registerAndVerify(service, 'pages.mfa.passkey-step@example.com');
  const visitor = await signedInVisitor(service, account.email, account.password);
  const authenticator = createSoftAuthenticator(service.url);
  assert.is((await addPasskeyOnPage(context, visitor, authenticator)).status, 200);

  const { visitor: browser, answer } = await firstStep(context, account);
  const page = await browser.get(answer.location!);
  assert.is(page.status, 200);
  assert.is(page.headers.get('content-security-policy'), SCRIPTED_PAGE_CSP);
  assert.match(page.text, /<label for="code">Recovery code<\/label>/, 'no app: the code field is for a recovery code');
  assert.match(page.text, 'Use a passkey');
  const request = dataOptions(page.text, '/login/mfa');
  assert.equal(request.allowCredentials.map((entry: { id: string }) => entry.id), [...authenticator.credentials.keys()]);
  const garbage = await browser.post('/login/mfa', { response: '{not json' });
  assert.is(garbage.status, 400);
  assert.match(garbage.text, 'Part of the form could not be used.');
  const signedIn = await browser.post('/login/mfa', { response: JSON.stringify(authenticator.authenticate(request)) });
  assert.is(signedIn.status, 303, signedIn.text);
  assert.is(signedIn.location, '/account');
  context.secrets.add(browser.cookies.get('svc_token')!);
});

test('a step-up by passkey: the answer to sign-in options confirms a change', async (context) => {
  const { service } = context;
  const account = await registerAndVerify(service, 'pages.mfa.passkey-proof@example.com');
  const visitor = await signedInVisitor(service, account.email, account.password);
  const authenticator = createSoftAuthenticator(service.url);
  const added = await addPasskeyOnPage(context, visitor, authenticator);
  for (const code of shownCodes(added.text)) context.secrets.add(code);
  await visitor.get('/account');
  const options = await request(service.url, 'POST', `${AUTH}/login/passkey/options`, { json: {} });
  const answer = await visitor.post('/account/email', { new_email: 'pages.mfa.passkey-proof.new@example.com', password: PASSWORD, response: JSON.stringify(authenticator.authenticate(options.body.options)) });
  assert.is(answer.status, 303, answer.text);
  assert.is(answer.location, '/account?done=email');
});

test('garbage on every new form: a 4xx page, never a 5xx; and none is accepted from another site or without its token', async (context) => {
  const { service } = context;
  const { account, visitor } = await signedInWithApp(context, 'pages.mfa.garbage@example.com');
  // The second step's form needs a sign-in waiting for it, else it only sends the reader back to /login.
  const { visitor: pending } = await firstStep(context, account);
  const junk: Array<Record<string, string>> = [
    { response: '{not json' },
    { response: '[]' },
    { response: '{"id":1,"response":{}}' },
    { response: 'null', code: 'x'.repeat(200) },
    { code: '', password: '' },
    { passkey_id: 'x'.repeat(300), password: PASSWORD, code: '12' },
    { name: 'n'.repeat(500), response: '{"id":"a","rawId":"a","type":"public-key","response":{"clientDataJSON":"e30","attestationObject":"AA"}}' },
    { otpauth_url: 'otpauth://totp/x?secret=%00', code: '1' },
  ];
  const paths = [
    '/login/mfa',
    '/login/passkey',
    '/account/mfa/totp/setup',
    '/account/mfa/totp/enable',
    '/account/mfa/totp/disable',
    '/account/mfa/recovery-codes',
    '/account/mfa/passkeys/options',
    '/account/mfa/passkeys',
    '/account/mfa/passkeys/remove',
  ];
  for (const path of paths) {
    const browser = path === '/login/mfa' ? pending : visitor;
    for (const fields of junk) {
      await browser.get(path === '/login/mfa' ? '/login/mfa' : '/account');
      const answer = await browser.post(path, fields);
      assert.ok(answer.status >= 400 && answer.status < 500, `${path} ${JSON.stringify(fields).slice(0, 80)}: ${answer.status} ${answer.text.slice(0, 300)}`);
      assertPageHeaders(answer);
    }
    await visitor.get('/account');
    assert.is((await visitor.post(path, { password: PASSWORD }, { csrf: null })).status, 403, `${path} without a token`);
    assert.is((await visitor.post(path, { password: PASSWORD }, { origin: 'https://evil.example' })).status, 403, `${path} from another site`);
  }
  const errors = service.logs.lines.map((line) => JSON.parse(line)).filter((line) => line.level === 'error');
  assert.equal(errors, []);
});

test('the passkey script and the WebAuthn library are served as files, hashed and plain', async ({ service }) => {
  const page = await request(service.url, 'GET', '/login');
  const sources = [...page.text.matchAll(/<script src="([^"]+)" defer><\/script>/g)].map((match) => match[1]);
  assert.is(sources.length, 2);
  assert.match(sources[0], /^\/assets\/simplewebauthn-browser\.[0-9a-f]{12}\.js$/);
  assert.match(sources[1], /^\/assets\/passkeys\.[0-9a-f]{12}\.js$/);
  for (const source of sources) {
    const file = await request(service.url, 'GET', source);
    assert.is(file.status, 200);
    assert.is(file.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.is(file.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  }
  assert.match((await request(service.url, 'GET', sources[0])).text, 'SimpleWebAuthnBrowser');
  assert.match((await request(service.url, 'GET', '/assets/passkeys.js')).text, '[data-passkey-area]');
});

test('a role that needs a second factor: the account page opens, says so, and the card sets one up', async (context) => {
  const account = await registerAndVerify(context.service, 'pages.mfa.admin@example.com');
  await context.service.deps.db.query("UPDATE accounts SET role = 'admin' WHERE email = $1", [account.email]);
  // The log check below reads the whole run: the first instance's lines are carried over.
  const earlier = context.service.logs.lines;
  context.service = await context.service.restart({ MFA_REQUIRED_ROLES: 'admin' });
  context.service.logs.lines.unshift(...earlier);
  const visitor = await signedInVisitor(context.service, account.email, account.password);
  context.secrets.add(visitor.cookies.get('svc_token')!);
  const page = await visitor.get('/account');
  assert.is(page.status, 200, page.text);
  assert.match(page.text, 'Accounts with your role need a second factor.');
  assert.match(page.text, '<form method="post" action="/account/mfa/totp/setup#mfa">');
  await turnOnApp(context, visitor);
  assert.not.match((await visitor.get('/account')).text, 'Accounts with your role need a second factor.');
});

test('the log holds no authenticator key, recovery code, sign-in token or session', async (context) => {
  const { service, secrets } = context;
  // Its own sign-in with the app as the second step, besides whatever the other tests did.
  const { account, secret } = await signedInWithApp(context, 'pages.mfa.audit@example.com');
  const { visitor } = await firstStep(context, account);
  await visitor.get('/login/mfa');
  assert.is((await visitor.post('/login/mfa', { code: codeNow(service, secret) })).status, 303);
  secrets.add(visitor.cookies.get('svc_token')!);
  const text = service.logs.text();
  assert.ok(secrets.size >= 15, `${secrets.size} secrets`);
  for (const secret of secrets) assert.not.ok(text.includes(secret), `the log contains ${secret.slice(0, 6)}…`);
  assert.ok(service.logs.lines.some((line) => line.includes('"path":"/login/mfa"')), 'the second step is logged (by path)');
});

test.run();
