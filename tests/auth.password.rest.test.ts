import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, assertTokenPage, bearer, issuePaths, login, loginFrom, me, nextMail, registerAndVerify, requestFrom, tokenUsed } from './helpers/auth.ts';
import { RESET_LINK, resetToken } from './helpers/accounts.ts';
import { activityEvents } from './helpers/caller.ts';
import { request, startTestApp, type HttpResult, type TestService } from './helpers/service.ts';
import { submitLinkForm } from './helpers/pages.ts';

// docs/API.md, Account lifecycle (Password reset, Password change) over REST: what HTTP adds to
// the rules tested in process in tests/auth.password.caller.test.ts. An answer alike to the byte
// for every address, the mailed link's page and its form, credentials in headers and cookies
// from another site, bodies no client sends, and the limits per client IP.

const NEW_PASSWORD = 'a brand new passphrase';
const MINUTE = 60_000;

const forgot = (service: TestService, email: unknown) => request(service.url, 'POST', `${AUTH}/password/forgot`, { json: { email } });
const reset = (service: TestService, token: unknown, password: unknown) => request(service.url, 'POST', `${AUTH}/password/reset`, { json: { token, password } });
const change = (service: TestService, headers: Record<string, string>, body: unknown) =>
  request(service.url, 'POST', `${AUTH}/password/change`, { json: body, headers });
const page = (service: TestService, token: string) => request(service.url, 'GET', `/reset-password?token=${encodeURIComponent(token)}`);
// As a browser does: open the mailed link's page, then send its form (it carries a CSRF token).
const submitForm = (service: TestService, fields: Record<string, string>) => submitLinkForm(service, '/reset-password', fields);
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const withoutVolatile = (result: HttpResult) => [...result.headers.keys()].filter((name) => name !== 'x-request-id' && name !== 'date');

// ---------------------------------------------------------------------------------------------

const test = suite<{ service: TestService }>('REST password reset and change: /password/forgot, /password/reset, /password/change, /reset-password');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

test('forgot answers a known and an unknown address with the same status, headers and body; only the known one gets a mail', async ({ service }) => {
  const known = await registerAndVerify(service, 'forgot.known@example.com');
  const unknownEmail = 'forgot.nobody@example.com';
  const resetRows = async () => (await service.deps.db.query("SELECT 1 FROM email_tokens WHERE purpose = 'reset'")).length;
  const rowsBefore = await resetRows();
  const seen = service.smtp.mailsTo(known.email).length;

  const unknown = await forgot(service, unknownEmail);
  const knownAnswer = await forgot(service, known.email);
  assert.is(unknown.status, 200, unknown.text);
  assert.is(knownAnswer.status, 200, knownAnswer.text);
  assert.equal(Object.keys(knownAnswer.body).sort(), ['message', 'success']);
  assert.is(knownAnswer.body.success, true);
  assert.equal(knownAnswer.body, unknown.body);
  assert.equal(withoutVolatile(knownAnswer), withoutVolatile(unknown));

  const mail = await nextMail(service, known.email, seen, RESET_LINK);
  assert.match(mail.subject, /reset/i);
  // A later mail has arrived; one sent earlier to the unknown address would have too.
  await registerAndVerify(service, 'forgot.sentinel@example.com');
  assert.is(service.smtp.mailsTo(unknownEmail).length, 0, 'no mail to an address without an account');
  assert.is(service.smtp.mailsTo(known.email).length, seen + 1, 'one mail to the known address');
  assert.is(await resetRows(), rowsBefore + 1, 'a token for the known address only');
});

test('GET /reset-password (twice, like a mail scanner) shows a form with a labelled password input and does not use the token', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.scanner@example.com');
  const token = await resetToken(service, account.email);
  for (let visit = 0; visit < 2; visit++) {
    const shown = await page(service, token);
    assertTokenPage(shown, '/reset-password', token);
    const input = /<input[^>]*\bname="password"[^>]*>/.exec(shown.text);
    assert.ok(input, 'a password input');
    assert.match(input[0], /\btype="password"/);
    const id = /\bid="([^"]+)"/.exec(input[0]);
    assert.ok(id, 'the input has an id for its label');
    assert.match(shown.text, new RegExp(`<label for="${escapeRegExp(id[1])}">[^<]*\\w[^<]*</label>`));
  }
  assert.is(await tokenUsed(service, token), false);
  assert.is((await login(service, account.email, PASSWORD)).status, 200, 'the password is unchanged');
  assert.is((await reset(service, token, NEW_PASSWORD)).status, 200);
});



test('the page form (a urlencoded POST) sets the new password; a second POST says the link is no longer valid', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.form@example.com');
  const token = await resetToken(service, account.email);
  const done = await submitForm(service, { token, password: NEW_PASSWORD });
  assert.is(done.status, 200, done.text);
  assert.match(done.headers.get('content-type') ?? '', 'text/html');
  assert.match(done.text, /password is changed/i);
  assert.is((await login(service, account.email, NEW_PASSWORD)).status, 200);
  assertError(await login(service, account.email, PASSWORD), 401, 'INVALID_CREDENTIALS');

  const again = await submitForm(service, { token, password: 'yet another password' });
  assert.is(again.status, 400);
  assert.match(again.text, /no longer valid/i);
  assertError(await login(service, account.email, 'yet another password'), 401, 'INVALID_CREDENTIALS');
});

test('the page form with a short password shows the form again with 400, and the token still works', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.formshort@example.com');
  const token = await resetToken(service, account.email);
  const shown = await submitForm(service, { token, password: 'short' });
  assert.is(shown.status, 400);
  assert.match(shown.headers.get('content-type') ?? '', 'text/html');
  assert.match(shown.text, /<form method="post" action="\/reset-password">/);
  assert.match(shown.text, `<input type="hidden" name="token" value="${token}"/>`);
  assert.match(shown.text, /<input[^>]*name="password"[^>]*type="password"/);
  assert.match(shown.text, /at least 8 characters/);
  assert.is(await tokenUsed(service, token), false);

  assert.is((await submitForm(service, { token, password: NEW_PASSWORD })).status, 200);
  assert.is((await login(service, account.email, NEW_PASSWORD)).status, 200);
});

test('the link\'s page still shows its form at 59 minutes; after 61 its form says the link is no longer valid', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.page.late@example.com');
  const token = await resetToken(service, account.email);
  service.clock.advance(59 * MINUTE);
  assertTokenPage(await page(service, token), '/reset-password', token);

  service.clock.advance(2 * MINUTE);
  const form = await submitForm(service, { token, password: NEW_PASSWORD });
  assert.is(form.status, 400);
  assert.match(form.text, /no longer valid/i);
  assert.is((await login(service, account.email, PASSWORD)).status, 200, 'the password is unchanged');
});

test('change password without credentials: 401 UNAUTHORIZED', async ({ service }) => {
  const body = { current_password: PASSWORD, new_password: NEW_PASSWORD };
  const anonymous = await change(service, {}, body);
  assertError(anonymous, 401, 'UNAUTHORIZED');
  assert.is(anonymous.headers.get('www-authenticate'), 'Bearer');
  assertError(await change(service, bearer('not-a-jwt'), body), 401, 'UNAUTHORIZED');
  assertError(await change(service, bearer('0'.repeat(64)), body), 401, 'UNAUTHORIZED');
});

test('change password by the svc_token cookie (same origin) keeps that session; one from another site changes nothing', async ({ service }) => {
  const account = await registerAndVerify(service, 'change.cookie@example.com');
  const other = await login(service, account.email);
  const cookie = `svc_token=${account.token}`;
  const body = { current_password: PASSWORD, new_password: NEW_PASSWORD };
  assertError(await change(service, { cookie, origin: 'https://evil.example' }, body), 403, 'FORBIDDEN');
  assert.is((await login(service, account.email, PASSWORD)).status, 200, 'the cross-site request changed nothing');

  const result = await change(service, { cookie, origin: service.env.PUBLIC_URL }, body);
  assert.is(result.status, 200, result.text);
  assert.is((await me(service, { cookie })).status, 200, "the cookie's session stays");
  assertError(await me(service, bearer(other.body.token)), 401, 'UNAUTHORIZED');
  assert.is((await login(service, account.email, NEW_PASSWORD)).status, 200);
});

test('change password refuses bodies no client sends with 400 VALIDATION_FAILED naming the fields', async ({ service }) => {
  const account = await registerAndVerify(service, 'change.garbage@example.com');
  // What each field takes is tested in process (auth.password.caller.test.ts): these are bodies no client sends.
  const cases: Array<[unknown, string[]]> = [
    [{}, ['current_password', 'new_password']],
    [{ current_password: PASSWORD }, ['new_password']],
    [{ current_password: 5, new_password: true }, ['current_password', 'new_password']],
    [[PASSWORD, NEW_PASSWORD], ['(body)']],
  ];
  for (const [body, paths] of cases) {
    const result = await change(service, bearer(account.token), body);
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(result).sort(), paths, `for ${JSON.stringify(body)}`);
  }
  assert.is((await login(service, account.email, PASSWORD)).status, 200, 'nothing changed');
  assert.is((await me(service, bearer(account.token))).status, 200);
});

test.run();

// ---------------------------------------------------------------------------------------------

const limited = suite<{ service: TestService }>('REST password reset and change with RATE_LIMITS=on');

limited.before(async (context) => {
  context.service = await startTestApp({ RATE_LIMITS: 'on' });
});
limited.after(async ({ service }) => {
  await service?.close();
});

const forgotFrom = (service: TestService, ip: string, email: string) => requestFrom(ip, service.url, 'POST', `${AUTH}/password/forgot`, { json: { email } });

/** A 429 with the error body; returns its Retry-After. */
function assertLimited(result: HttpResult): string {
  assertError(result, 429, 'RATE_LIMITED');
  const retryAfter = result.headers.get('retry-after');
  assert.ok(retryAfter && /^\d+$/.test(retryAfter) && Number(retryAfter) > 0, `Retry-After: ${retryAfter}`);
  return retryAfter;
}

async function failedLogins(service: TestService, email: string): Promise<number> {
  const [row] = await service.deps.db.query<{ hits: number }>('SELECT hits FROM rate_limits WHERE key = $1', [`login-failed:${email}`]);
  return row?.hits ?? 0;
}

limited('forgot: 5 per address per hour; the 429, its Retry-After and body are the same for a known and an unknown address', async ({ service }) => {
  const known = await registerAndVerify(service, 'limit.known@example.com');
  const unknownEmail = 'limit.nobody@example.com';
  for (let round = 0; round < 5; round++) {
    assert.is((await forgotFrom(service, '127.0.21.1', known.email)).status, 200, `known, ${round + 1}`);
    assert.is((await forgotFrom(service, '127.0.21.2', unknownEmail)).status, 200, `unknown, ${round + 1}`);
  }
  const knownLimited = await forgotFrom(service, '127.0.21.1', known.email);
  const unknownLimited = await forgotFrom(service, '127.0.21.2', unknownEmail);
  assert.is(assertLimited(knownLimited), '3600');
  assert.is(assertLimited(unknownLimited), '3600');
  assert.equal(knownLimited.body, unknownLimited.body);
  assert.is(assertLimited(await forgotFrom(service, '127.0.21.3', 'LIMIT.Known@example.com')), '3600', 'per address, whatever the IP');
  assert.is((await forgotFrom(service, '127.0.21.1', 'limit.other@example.com')).status, 200, 'another address from the same IP');
});

limited('forgot: 20 per IP per hour, across addresses', async ({ service }) => {
  for (let round = 0; round < 20; round++) {
    assert.is((await forgotFrom(service, '127.0.22.1', `asker.${round}@example.com`)).status, 200, `request ${round + 1}`);
  }
  assert.is(assertLimited(await forgotFrom(service, '127.0.22.1', 'asker.extra@example.com')), '3600');
  assert.is((await forgotFrom(service, '127.0.22.2', 'asker.extra@example.com')).status, 200, 'another IP');
});

limited('a reset clears the failed-login count: an account locked by 100 failures logs in with the new password', async ({ service }) => {
  const account = await registerAndVerify(service, 'limit.locked@example.com');
  for (let host = 1; host <= 10; host++) {
    for (let round = 0; round < 10; round++) {
      assert.is((await loginFrom(service, `127.0.23.${host}`, account.email)).status, 401, `host ${host}, attempt ${round + 1}`);
    }
  }
  assertLimited(await loginFrom(service, '127.0.23.11', account.email, PASSWORD));
  assert.ok((await failedLogins(service, account.email)) > 100);

  const token = await resetToken(service, account.email, '127.0.23.20');
  assert.is((await requestFrom('127.0.23.20', service.url, 'POST', `${AUTH}/password/reset`, { json: { token, password: NEW_PASSWORD } })).status, 200);
  assert.is(await failedLogins(service, account.email), 0);
  assert.is((await loginFrom(service, '127.0.23.12', account.email, NEW_PASSWORD)).status, 200);
  assertError(await loginFrom(service, '127.0.23.13', account.email, PASSWORD), 401, 'INVALID_CREDENTIALS');
});

limited('a wrong current_password counts as a failed login of the account (rate_limits login-failed:<email>)', async ({ service }) => {
  const account = await registerAndVerify(service, 'limit.counted@example.com');
  const before = await failedLogins(service, account.email);
  const wrong = { current_password: 'not the password', new_password: NEW_PASSWORD };
  assertError(await change(service, bearer(account.token), wrong), 401, 'INVALID_CREDENTIALS');
  assert.is(await failedLogins(service, account.email), before + 1);
  assertError(await change(service, bearer(account.apiKey), wrong), 401, 'INVALID_CREDENTIALS');
  assert.is(await failedLogins(service, account.email), before + 2);

  assert.is((await change(service, bearer(account.token), { current_password: PASSWORD, new_password: NEW_PASSWORD })).status, 200);
  assert.is(await failedLogins(service, account.email), before + 2, 'a right password is not a failure');
  const recorded = await activityEvents(service, bearer(account.token));
  assert.equal(recorded.slice(0, 3), ['password.changed', 'login.failed', 'login.failed']);
});

limited('more than 10 wrong current passwords from one session in an hour: 429; another session is not held up', async ({ service }) => {
  const account = await registerAndVerify(service, 'limit.guesser@example.com');
  for (let round = 0; round < 10; round++) {
    const result = await change(service, bearer(account.token), { current_password: `guess number ${round}`, new_password: NEW_PASSWORD });
    assertError(result, 401, 'INVALID_CREDENTIALS');
  }
  const refused = await change(service, bearer(account.token), { current_password: PASSWORD, new_password: NEW_PASSWORD });
  assert.is(assertLimited(refused), '3600');
  assertError(await loginFrom(service, '127.0.24.1', account.email, NEW_PASSWORD), 401, 'INVALID_CREDENTIALS');

  const other = await loginFrom(service, '127.0.24.2', account.email, PASSWORD);
  assert.is(other.status, 200, other.text);
  const changed = await change(service, bearer(other.body.token), { current_password: PASSWORD, new_password: NEW_PASSWORD });
  assert.is(changed.status, 200, changed.text);
  assert.is((await loginFrom(service, '127.0.24.3', account.email, NEW_PASSWORD)).status, 200);
});

limited.run();
