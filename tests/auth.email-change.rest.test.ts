import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  AUTH,
  PASSWORD,
  assertError,
  assertTokenPage,
  tokenUsed,
  bearer,
  login,
  nextMail,
  registerAndVerify,
} from './helpers/auth.ts';
import { changeToken, emailOf } from './helpers/accounts.ts';
import { request, startTestApp, type HttpResult, type TestService } from './helpers/service.ts';
import { submitLinkForm } from './helpers/pages.ts';

// What HTTP adds to an e-mail change: credentials in headers, the mailed link's page and its
// form, and an answer alike to the byte whether the new address is taken. The procedures'
// rules are tested in process: tests/auth.email-change.caller.test.ts.

const test = suite<{ service: TestService }>('REST e-mail change: /email/change, /email/confirm, /confirm-email');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});


const changeEmail = (service: TestService, headers: Record<string, string>, body: unknown) =>
  request(service.url, 'POST', `${AUTH}/email/change`, { json: body, headers });
const confirm = (service: TestService, token: unknown) => request(service.url, 'POST', `${AUTH}/email/confirm`, { json: { token } });
const page = (service: TestService, token: string) => request(service.url, 'GET', `/confirm-email?token=${encodeURIComponent(token)}`);
// As a browser does: open the mailed link's page, then press its button (the form carries a CSRF token).
const submitForm = (service: TestService, token: string) => submitLinkForm(service, '/confirm-email', { token });
const withoutVolatile = (result: HttpResult) => [...result.headers.keys()].filter((name) => name !== 'x-request-id' && name !== 'date');



test('without credentials: 401 UNAUTHORIZED', async ({ service }) => {
  const body = { new_email: 'nobody.new@example.com', password: PASSWORD };
  assertError(await changeEmail(service, {}, body), 401, 'UNAUTHORIZED');
  assertError(await changeEmail(service, bearer('not-a-jwt'), body), 401, 'UNAUTHORIZED');
  assertError(await changeEmail(service, bearer('0'.repeat(64)), body), 401, 'UNAUTHORIZED');
});


test('GET /confirm-email (twice, like a mail scanner) shows a confirm button and does not use the token', async ({ service }) => {
  const account = await registerAndVerify(service, 'scanner.old@example.com');
  const newEmail = 'scanner.new@example.com';
  const token = await changeToken(service, account, newEmail);
  for (let visit = 0; visit < 2; visit++) {
    const shown = await page(service, token);
    assertTokenPage(shown, '/confirm-email', token);
    assert.match(shown.text, /<button[^>]*type="submit"/);
  }
  assert.is(await tokenUsed(service, token), false);
  assert.is(await emailOf(service, account.user.id), account.email);
  assertError(await login(service, newEmail), 401, 'INVALID_CREDENTIALS');
  assert.is((await confirm(service, token)).status, 200);
});


test('a new address that belongs to another account: the same status, headers and body; it gets a notice and no link', async ({ service }) => {
  const holder = await registerAndVerify(service, 'holder@example.com', { name: 'Holder Person' });
  const mover = await registerAndVerify(service, 'mover@example.com');
  const seenHolder = service.smtp.mailsTo(holder.email).length;
  const seenMover = service.smtp.mailsTo(mover.email).length;

  const free = await changeEmail(service, bearer(mover.token), { new_email: 'mover.free@example.com', password: PASSWORD });
  const taken = await changeEmail(service, bearer(mover.token), { new_email: 'Holder@Example.com', password: PASSWORD });
  assert.is(free.status, 200, free.text);
  assert.is(taken.status, free.status);
  assert.equal(taken.body, free.body);
  assert.equal(withoutVolatile(taken), withoutVolatile(free));

  const notice = await nextMail(service, holder.email, seenHolder, /tried to move an account/i);
  assert.match(notice.text, 'Holder Person');
  assert.not.match(notice.text, 'confirm-email');
  assert.not.match(notice.html, 'confirm-email');
  assert.not.match(notice.text, /token=/);
  // The mover's old address hears of both requests; by then the holder's mails have been sent.
  await nextMail(service, mover.email, seenMover, /holder@example\.com/);
  await registerAndVerify(service, 'holder.sentinel@example.com');
  assert.is(service.smtp.mailsTo(holder.email).length, seenHolder + 1, 'the holder got the notice only');
  // The mover's account shows the change as pending either way (else its page would tell
  // whether the address is taken), but the link of a taken address was never mailed to anyone.
  const pending = await request(service.url, 'GET', `${AUTH}/email/pending`, { headers: bearer(mover.token) });
  assert.is(pending.body.pending?.new_email, holder.email, pending.text);
  assert.ok(service.smtp.mailsTo(holder.email).every((mail) => !/confirm-email/.test(mail.text)), 'no confirm link reached the holder');

  assert.is((await login(service, holder.email)).status, 200);
  assert.is(await emailOf(service, holder.user.id), holder.email);
  assert.is(await emailOf(service, mover.user.id), mover.email);
});


test('the page form (a urlencoded POST) confirms the change; a used or expired link\'s form is refused', async ({ service }) => {
  const account = await registerAndVerify(service, 'form.old@example.com');
  const newEmail = 'form.new@example.com';
  const token = await changeToken(service, account, newEmail);
  const done = await submitForm(service, token);
  assert.is(done.status, 200, done.text);
  assert.match(done.headers.get('content-type') ?? '', 'text/html');
  assert.match(done.text, /confirmed/i);
  assert.is((await login(service, newEmail)).status, 200);
  assertError(await login(service, account.email), 401, 'INVALID_CREDENTIALS');
  // Used, the link's form is a page that says so.
  const again = await submitForm(service, token);
  assert.is(again.status, 400);
  assert.match(again.text, /no longer valid/i);
  // So is a link past its 24 hours on the test clock.
  const late = await registerAndVerify(service, 'form.late.old@example.com');
  const lateToken = await changeToken(service, late, 'form.late.new@example.com');
  service.clock.advance(24 * 3600_000 + 60_000);
  assert.is((await submitForm(service, lateToken)).status, 400);
  assert.is(await emailOf(service, late.user.id), late.email);
});

test.run();
