import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, login, nextMail, registerAndVerify, registerForToken } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { submitLinkForm } from './helpers/pages.ts';
import { linkToken } from './helpers/smtp.ts';

const test = suite<{ service: TestService }>('REST verification: the /verify-email page, verify-email and resend-verification');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const verify = (service: TestService, token: unknown) => request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token } });
const resend = (service: TestService, email: string) => request(service.url, 'POST', `${AUTH}/resend-verification`, { json: { email } });
const page = (service: TestService, token: string) => request(service.url, 'GET', `/verify-email?token=${encodeURIComponent(token)}`);
// As a browser does: open the mailed link's page, then press its button (the form carries a CSRF token).
const submitForm = (service: TestService, token: string) => submitLinkForm(service, '/verify-email', { token });

test('the mail links to {PUBLIC_URL}/verify-email with a 32-byte random token, stored only hashed', async ({ service }) => {
  const email = 'link@example.com';
  await registerForToken(service, email);
  const mail = service.smtp.mailsTo(email)[0];
  const link = new RegExp(`${service.env.PUBLIC_URL.replace(/\./g, '\\.')}/verify-email\\?token=([A-Za-z0-9_-]+)`).exec(mail.text);
  assert.ok(link, mail.text);
  assert.is(Buffer.from(link[1], 'base64url').length, 32);
  assert.match(mail.html, `/verify-email?token=${link[1]}`);
  const rows = await service.deps.db.query<{ row: string }>(
    'SELECT row_to_json(t)::text AS row FROM email_tokens t WHERE account_id = (SELECT id FROM accounts WHERE email = $1)',
    [email],
  );
  assert.is(rows.length, 1, 'one registration, one token');
  for (const { row } of rows) {
    assert.not.match(row, link[1]);
    assert.not.match(row, Buffer.from(link[1], 'base64url').toString('hex'));
  }
});

test('GET /verify-email shows a confirm button and does not use the token', async ({ service }) => {
  const email = 'scanner@example.com';
  const token = await registerForToken(service, email);
  for (let visit = 0; visit < 2; visit++) {
    const shown = await page(service, token);
    assert.is(shown.status, 200);
    assert.match(shown.headers.get('content-type') ?? '', 'text/html');
    assert.match(shown.text, /<form method="post" action="\/verify-email">/);
    assert.match(shown.text, `<input type="hidden" name="token" value="${token}"/>`);
    assert.match(shown.text, /<button[^>]*type="submit"/);
    assert.is(shown.headers.get('cache-control'), 'no-store');
    assert.is(shown.headers.get('referrer-policy'), 'no-referrer');
  }
  assertError(await login(service, email), 403, 'EMAIL_NOT_VERIFIED');

  const verified = await verify(service, token);
  assert.is(verified.status, 200);
  assert.equal(Object.keys(verified.body).sort(), ['message', 'success']);
  assert.is(verified.body.success, true);
  assert.is((await login(service, email)).status, 200);
});

test('the page button (a form POST) uses the token', async ({ service }) => {
  const email = 'button@example.com';
  const token = await registerForToken(service, email);
  assert.is((await page(service, token)).status, 200);
  const confirmed = await submitForm(service, token);
  assert.is(confirmed.status, 200);
  assert.match(confirmed.headers.get('content-type') ?? '', 'text/html');
  assert.match(confirmed.text, /confirmed/i);
  assert.is((await login(service, email)).status, 200);

  const again = await submitForm(service, token);
  assert.is(again.status, 400);
  assert.match(again.text, /no longer valid/i);
  assertError(await verify(service, token), 400, 'INVALID_TOKEN');
});

test('the page escapes whatever token it is given', async ({ service }) => {
  const shown = await page(service, '"><script>alert(1)</script>');
  assert.is(shown.status, 200);
  assert.not.match(shown.text, '<script>');
  assert.match(shown.text, 'value="&quot;>&lt;script>alert(1)&lt;/script>"');
  const missing = await request(service.url, 'GET', '/verify-email');
  assert.is(missing.status, 400);
  assert.not.match(missing.text, '<form');
});

test('a used token: 400 INVALID_TOKEN', async ({ service }) => {
  await registerAndVerify(service, 'used@example.com');
  const usedToken = linkToken(service.smtp.mailsTo('used@example.com')[0]);
  assertError(await verify(service, usedToken), 400, 'INVALID_TOKEN');
  assert.is((await login(service, 'used@example.com')).status, 200);
});

test('a token is used once even when submitted concurrently', async ({ service }) => {
  const token = await registerForToken(service, 'racing@example.com');
  const results = await Promise.all([0, 1, 2, 3, 4].map(() => verify(service, token)));
  assert.equal(results.map((result) => result.status).sort(), [200, 400, 400, 400, 400]);
});

test('an unknown token: 400 INVALID_TOKEN; a malformed one: 400 VALIDATION_FAILED', async ({ service }) => {
  assertError(await verify(service, Buffer.alloc(32, 7).toString('base64url')), 400, 'INVALID_TOKEN');
  assertError(await verify(service, 'x'), 400, 'INVALID_TOKEN');
  assertError(await verify(service, ''), 400, 'VALIDATION_FAILED');
  assertError(await verify(service, 42), 400, 'VALIDATION_FAILED');
  assertError(await verify(service, 't'.repeat(5000)), 400, 'VALIDATION_FAILED');
});

test('a new token (resend) voids the older ones', async ({ service }) => {
  const email = 'renewed@example.com';
  const first = await registerForToken(service, email);
  const seen = service.smtp.mailsTo(email).length;
  assert.is((await resend(service, email)).status, 200);
  const second = linkToken(await nextMail(service, email, seen));
  assert.is.not(second, first);
  assertError(await verify(service, first), 400, 'INVALID_TOKEN');
  assert.is((await verify(service, second)).status, 200);
});

test('resend answers the same for unverified, verified and unknown addresses; only the unverified one gets mail', async ({ service }) => {
  await registerForToken(service, 'resend.pending@example.com');
  await registerAndVerify(service, 'resend.done@example.com');
  const counts = () => ['resend.pending@example.com', 'resend.done@example.com', 'resend.nobody@example.com'].map((e) => service.smtp.mailsTo(e).length);
  const before = counts();
  const answers = [];
  for (const email of ['Resend.Pending@example.com', 'resend.done@example.com', 'resend.nobody@example.com']) {
    const answer = await resend(service, email);
    assert.is(answer.status, 200);
    answers.push(answer.body);
  }
  assert.equal(answers[1], answers[0]);
  assert.equal(answers[2], answers[0]);
  assert.equal(Object.keys(answers[0]).sort(), ['message', 'success']);

  await nextMail(service, 'resend.pending@example.com', before[0]);
  // A later mail has arrived; one sent earlier to the others would have arrived too.
  await registerForToken(service, 'resend.sentinel@example.com');
  assert.equal(counts(), [before[0] + 1, before[1], before[2]]);
  assertError(await resend(service, 'not an address'), 400, 'VALIDATION_FAILED');
});

test('tokens are valid for 24 hours', async ({ service }) => {
  const early = await registerForToken(service, 'early@example.com');
  const late = await registerForToken(service, 'late@example.com');
  service.clock.advance(23 * 3600 * 1000 + 59 * 60 * 1000);
  assert.is((await verify(service, early)).status, 200);
  service.clock.advance(60 * 1000 + 1000);
  assertError(await verify(service, late), 400, 'INVALID_TOKEN');
  const form = await submitForm(service, late);
  assert.is(form.status, 400);
  assertError(await login(service, 'late@example.com', PASSWORD), 403, 'EMAIL_NOT_VERIFIED');

  const seen = service.smtp.mailsTo('late@example.com').length;
  await resend(service, 'late@example.com');
  assert.is((await verify(service, linkToken(await nextMail(service, 'late@example.com', seen)))).status, 200);
});

test.run();
