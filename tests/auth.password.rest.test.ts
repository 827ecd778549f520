import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  AUTH,
  MAIL_TIMEOUT_MS,
  PASSWORD,
  assertError,
  assertTokenPage,
  assertTokenStoredHashed,
  tokenUsed,
  bearer,
  issuePaths,
  login,
  loginFrom,
  me,
  nextMail,
  registerAndVerify,
  registerForToken,
  requestFrom,
} from './helpers/auth.ts';
import type { Db, Tx } from '../server/src/lib/db.ts';
import { callerOf } from './helpers/caller.ts';
import { request, startTestApp, type HttpResult, type TestService } from './helpers/service.ts';
import { submitLinkForm } from './helpers/pages.ts';
import { linkToken } from './helpers/smtp.ts';
import { eventually } from './helpers/wait.ts';

const NEW_PASSWORD = 'a brand new passphrase';
const MINUTE = 60_000;

const forgot = (service: TestService, email: unknown) => request(service.url, 'POST', `${AUTH}/password/forgot`, { json: { email } });
const reset = (service: TestService, token: unknown, password: unknown) => request(service.url, 'POST', `${AUTH}/password/reset`, { json: { token, password } });
const change = (service: TestService, headers: Record<string, string>, body: unknown) =>
  request(service.url, 'POST', `${AUTH}/password/change`, { json: body, headers });
const activity = (service: TestService, headers: Record<string, string>) => request(service.url, 'GET', `${AUTH}/activity`, { headers });
const events = async (service: TestService, headers: Record<string, string>): Promise<string[]> => {
  const result = await activity(service, headers);
  assert.is(result.status, 200, result.text);
  return result.body.items.map((item: { event: string }) => item.event);
};
const page = (service: TestService, token: string) => request(service.url, 'GET', `/reset-password?token=${encodeURIComponent(token)}`);
// As a browser does: open the mailed link's page, then send its form (it carries a CSRF token).
const submitForm = (service: TestService, fields: Record<string, string>) => submitLinkForm(service, '/reset-password', fields);
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const withoutVolatile = (result: HttpResult) => [...result.headers.keys()].filter((name) => name !== 'x-request-id' && name !== 'date');

/** The first mail to `email`, after the `seen` ones, whose subject or text matches `pattern`. */

const RESET_LINK = /\/reset-password\?token=/;

/** Asks for a reset link (from `ip` when given) and returns the token the mail carries. */
async function resetToken(service: TestService, email: string, ip?: string): Promise<string> {
  const seen = service.smtp.mailsTo(email).length;
  const asked = ip ? await requestFrom(ip, service.url, 'POST', `${AUTH}/password/forgot`, { json: { email } }) : await forgot(service, email);
  assert.is(asked.status, 200, asked.text);
  return linkToken(await nextMail(service, email, seen, RESET_LINK), '/reset-password');
}

async function allSessions(service: TestService, accountId: number): Promise<number> {
  const [row] = await service.deps.db.query<{ count: number }>('SELECT count(*)::int AS count FROM sessions WHERE account_id = $1', [accountId]);
  return row.count;
}

async function signIns(service: TestService, accountId: number): Promise<number> {
  const [row] = await service.deps.db.query<{ count: number }>(`SELECT count(*)::int AS count FROM audit_events WHERE account_id = $1 AND event = 'login.succeeded'`, [accountId]);
  return row.count;
}

async function liveSessions(service: TestService, accountId: number): Promise<number> {
  const [row] = await service.deps.db.query<{ count: number }>('SELECT count(*)::int AS count FROM sessions WHERE account_id = $1 AND revoked_at IS NULL', [accountId]);
  return row.count;
}

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

test('forgot validates the address like registration: lower-cased and trimmed; not an address is 400 VALIDATION_FAILED naming email', async ({ service }) => {
  const account = await registerAndVerify(service, 'forgot.case@example.com');
  const seen = service.smtp.mailsTo(account.email).length;
  assert.is((await forgot(service, '  Forgot.Case@Example.COM ')).status, 200);
  await nextMail(service, account.email, seen, RESET_LINK);

  for (const bad of ['not an address', 'Name <forgot.case@example.com>', 'x'.repeat(250) + '@example.com', 42, undefined]) {
    const result = await forgot(service, bad);
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(result), ['email'], `for ${JSON.stringify(bad)}`);
  }
});

test('the link is {PUBLIC_URL}/reset-password?token=<43 base64url chars> (32 random bytes), stored only as its SHA-256', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.link@example.com');
  const seen = service.smtp.mailsTo(account.email).length;
  assert.is((await forgot(service, account.email)).status, 200);
  const mail = await nextMail(service, account.email, seen, RESET_LINK);

  const link = new RegExp(`^${escapeRegExp(service.env.PUBLIC_URL)}/reset-password\\?token=([A-Za-z0-9_-]+)$`, 'm').exec(mail.text);
  assert.ok(link, mail.text);
  const token = link[1];
  assert.is(token.length, 43);
  assert.is(Buffer.from(token, 'base64url').length, 32);
  assert.is(Buffer.from(token, 'base64url').toString('base64url'), token);
  assert.match(mail.html, `/reset-password?token=${token}`);
  assert.not.match(mail.subject, token);

  await assertTokenStoredHashed(service, account.user.id, 'reset', token);
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

test('a reset sets the new password: the old one answers 401, the new one logs in', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.sets@example.com');
  const token = await resetToken(service, account.email);
  const result = await reset(service, token, NEW_PASSWORD);
  assert.is(result.status, 200, result.text);
  assert.equal(Object.keys(result.body).sort(), ['message', 'success']);
  assert.is(result.body.success, true);
  assertError(await login(service, account.email, PASSWORD), 401, 'INVALID_CREDENTIALS');
  assert.is((await login(service, account.email, NEW_PASSWORD)).status, 200);
});

test('a reset that lands while a login checks the old password leaves that login no session', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.during.login@example.com');
  const token = await resetToken(service, account.email);
  // The reset is made to land between the login's password check and its session, where a
  // race put it: the check is the hasher's verify, so the reset runs as it returns.
  const hasher = service.deps.passwords;
  const verify = hasher.verify.bind(hasher);
  let landed: HttpResult | undefined;
  hasher.verify = async (hash, password) => {
    const matched = await verify(hash, password);
    hasher.verify = verify;
    landed = await reset(service, token, NEW_PASSWORD);
    return matched;
  };
  try {
    assertError(await login(service, account.email, PASSWORD), 401, 'INVALID_CREDENTIALS');
  } finally {
    hasher.verify = verify;
  }
  assert.is(landed?.status, 200, landed?.text);
  assert.is(await liveSessions(service, account.user.id), 0, 'no session of the old password');
  assert.is((await login(service, account.email, NEW_PASSWORD)).status, 200);
});

// A second connection holds the account's row: the embedded database has one.
if (process.env.DATABASE_URL) {
  test('a login whose session is written while a reset holds the account waits for it, and then gets none', async ({ service }) => {
    const account = await registerAndVerify(service, 'reset.holding.login@example.com');
    const sessionsBefore = await allSessions(service, account.user.id);
    const signInsBefore = await signIns(service, account.user.id);
    // A reset's transaction, its new hash written and not committed yet.
    const resetting = new pg.Client({ connectionString: service.env.DATABASE_URL });
    await resetting.connect();
    try {
      await resetting.query('BEGIN');
      await resetting.query(`UPDATE accounts SET password_hash = 'written by a reset' WHERE id = $1`, [account.user.id]);
      const answer = login(service, account.email, PASSWORD);
      await eventually(
        "the login's session to wait for the account row",
        async () => {
          const rows = await resetting.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
          return rows.rowCount === 1;
        },
      );
      await resetting.query('COMMIT');
      assertError(await answer, 401, 'INVALID_CREDENTIALS');
    } finally {
      await resetting.query('ROLLBACK').catch(() => undefined);
      await resetting.end();
    }
    assert.is(await allSessions(service, account.user.id), sessionsBefore, 'no session of the old password');
    assert.is(await signIns(service, account.user.id), signInsBefore, 'no sign-in in the activity log');
  });
}

test('a reset token works once: the second use is 400 INVALID_TOKEN and changes nothing', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.once@example.com');
  const token = await resetToken(service, account.email);
  assert.is((await reset(service, token, NEW_PASSWORD)).status, 200);
  assertError(await reset(service, token, 'a second new password'), 400, 'INVALID_TOKEN');
  assertError(await login(service, account.email, 'a second new password'), 401, 'INVALID_CREDENTIALS');
  assert.is((await login(service, account.email, NEW_PASSWORD)).status, 200);
});

test('concurrent uses of one reset token apply once', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.race@example.com');
  const token = await resetToken(service, account.email);
  const passwords = [0, 1, 2, 3, 4].map((n) => `racing new password ${n}`);
  const results = await Promise.all(passwords.map((password) => reset(service, token, password)));
  assert.equal(results.map((result) => result.status).sort(), [200, 400, 400, 400, 400]);
  for (const result of results.filter((r) => r.status !== 200)) assertError(result, 400, 'INVALID_TOKEN');

  const winner = results.findIndex((result) => result.status === 200);
  for (const [index, password] of passwords.entries()) {
    assert.is((await login(service, account.email, password)).status, index === winner ? 200 : 401, `password ${index}`);
  }
  const resets = await service.deps.db.query("SELECT 1 FROM audit_events WHERE account_id = $1 AND event = 'password.reset'", [account.user.id]);
  assert.is(resets.length, 1, 'one reset recorded');
});

test('a newer forgot voids the older link', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.renewed@example.com');
  const older = await resetToken(service, account.email);
  const newer = await resetToken(service, account.email);
  assert.is.not(newer, older);
  assertError(await reset(service, older, NEW_PASSWORD), 400, 'INVALID_TOKEN');
  assert.is((await login(service, account.email, PASSWORD)).status, 200, 'the void link changed nothing');
  assert.is((await reset(service, newer, NEW_PASSWORD)).status, 200);
  assert.is((await login(service, account.email, NEW_PASSWORD)).status, 200);
});

test('concurrent forgot requests for one address leave exactly one live link', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.burst@example.com');
  const seen = service.smtp.mailsTo(account.email).length;
  const answers = await Promise.all(Array.from({ length: 8 }, () => forgot(service, account.email)));
  assert.equal(answers.map((answer) => answer.status), Array(8).fill(200));
  await service.smtp.waitFor(account.email, (mail) => service.smtp.mailsTo(account.email).indexOf(mail) >= seen + 7, MAIL_TIMEOUT_MS);
  const tokens = service.smtp.mailsTo(account.email).slice(seen).map((mail) => linkToken(mail, '/reset-password'));
  const live = await service.deps.db.query(
    "SELECT 1 FROM email_tokens WHERE account_id = $1 AND purpose = 'reset' AND used_at IS NULL",
    [account.user.id],
  );
  assert.is(live.length, 1, `a new link voids every older one, yet ${live.length} of the ${tokens.length} mailed links are live`);
});

test('an unknown token, or a token mailed for something else, is 400 INVALID_TOKEN; a malformed one 400 VALIDATION_FAILED', async ({ service }) => {
  assertError(await reset(service, Buffer.alloc(32, 9).toString('base64url'), NEW_PASSWORD), 400, 'INVALID_TOKEN');
  const verifyToken = await registerForToken(service, 'reset.purpose@example.com');
  assertError(await reset(service, verifyToken, NEW_PASSWORD), 400, 'INVALID_TOKEN');
  assert.is(await tokenUsed(service, verifyToken), false, 'the verification link still works');

  const empty = await reset(service, '', NEW_PASSWORD);
  assertError(empty, 400, 'VALIDATION_FAILED');
  assert.equal(issuePaths(empty), ['token']);
  const numeric = await reset(service, 42, NEW_PASSWORD);
  assertError(numeric, 400, 'VALIDATION_FAILED');
  assert.equal(issuePaths(numeric), ['token']);
  assertError(await request(service.url, 'POST', `${AUTH}/password/reset`, { json: {} }), 400, 'VALIDATION_FAILED');
});

test('the link still works at 59 minutes and is dead after 61 minutes on the test clock', async ({ service }) => {
  const early = await registerAndVerify(service, 'reset.early@example.com');
  const late = await registerAndVerify(service, 'reset.late@example.com');
  const earlyToken = await resetToken(service, early.email);
  const lateToken = await resetToken(service, late.email);

  service.clock.advance(59 * MINUTE);
  assert.is((await page(service, lateToken)).status, 200);
  assert.is((await reset(service, earlyToken, NEW_PASSWORD)).status, 200);
  assert.is((await login(service, early.email, NEW_PASSWORD)).status, 200);

  service.clock.advance(2 * MINUTE);
  assertError(await reset(service, lateToken, NEW_PASSWORD), 400, 'INVALID_TOKEN');
  const form = await submitForm(service, { token: lateToken, password: NEW_PASSWORD });
  assert.is(form.status, 400);
  assert.match(form.text, /no longer valid/i);
  assertError(await login(service, late.email, NEW_PASSWORD), 401, 'INVALID_CREDENTIALS');
  assert.is((await login(service, late.email, PASSWORD)).status, 200);
});

test('a reset ends every session of the account: a JWT from before answers 401 on /me', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.sessions@example.com');
  const second = await login(service, account.email);
  assert.is(second.status, 200);
  // Asked once before, so a cached answer would be there to go stale.
  assert.is((await me(service, bearer(account.token))).status, 200);
  assert.is((await me(service, bearer(second.body.token))).status, 200);

  const token = await resetToken(service, account.email);
  assert.is((await reset(service, token, NEW_PASSWORD)).status, 200);
  assertError(await me(service, bearer(account.token)), 401, 'UNAUTHORIZED');
  assertError(await me(service, bearer(second.body.token)), 401, 'UNAUTHORIZED');
  assertError(await me(service, { cookie: `svc_token=${second.body.token}` }), 401, 'UNAUTHORIZED');
  assert.is(await liveSessions(service, account.user.id), 0);
});

test('a reset keeps the API key: the same key still works, and login returns it', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.key@example.com');
  assert.is((await me(service, bearer(account.apiKey))).status, 200);
  const token = await resetToken(service, account.email);
  assert.is((await reset(service, token, NEW_PASSWORD)).status, 200);

  const byKey = await me(service, bearer(account.apiKey));
  assert.is(byKey.status, 200, byKey.text);
  assert.is(byKey.body.user.api_key, account.apiKey);
  const loggedIn = await login(service, account.email, NEW_PASSWORD);
  assert.is(loggedIn.status, 200);
  assert.is(loggedIn.body.user.api_key, account.apiKey);
  assert.ok((await events(service, bearer(account.apiKey))).includes('password.reset'), 'password.reset is in the activity');
});

test('a reset marks an unverified account verified (the mail arrived), in its activity as a verification link would', async ({ service }) => {
  const email = 'reset.unverified@example.com';
  await registerForToken(service, email);
  assertError(await login(service, email), 403, 'EMAIL_NOT_VERIFIED');
  const token = await resetToken(service, email);
  assert.is((await reset(service, token, NEW_PASSWORD)).status, 200);
  const loggedIn = await login(service, email, NEW_PASSWORD);
  assert.is(loggedIn.status, 200, loggedIn.text);
  assert.is(loggedIn.body.user.email_verified, true);
  const seen = await events(service, bearer(loggedIn.body.token));
  assert.is(seen.filter((event) => event === 'email.verified').length, 1, seen.join(', '));
  assert.ok(seen.includes('password.reset'), seen.join(', '));
});

test('a reset of an account verified already records no second email.verified', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.verified-before@example.com');
  const token = await resetToken(service, account.email);
  assert.is((await reset(service, token, NEW_PASSWORD)).status, 200);
  const seen = await events(service, bearer(account.apiKey));
  assert.ok(seen.includes('password.reset'), seen.join(', '));
  assert.is(seen.filter((event) => event === 'email.verified').length, 1, seen.join(', '));
});

if (process.env.DATABASE_URL) {
  // PostgreSQL only: the embedded database has one connection, so no two transactions overlap there.
  test('a verification link used while a reset of the account runs: one waits for the other, both take effect, nothing deadlocks', async ({ service }) => {
    const email = 'reset.verify.locks@example.com';
    const verifyToken = await registerForToken(service, email);
    const token = await resetToken(service, email);
    // The verification's transaction stops once its first row lock is taken, until let go:
    // the reset then runs into whatever it holds.
    let holdingNow = () => {};
    let letGoNow = () => {};
    const holding = new Promise<void>((resolve) => (holdingNow = resolve));
    const letGo = new Promise<void>((resolve) => (letGoNow = resolve));
    const db = service.deps.db;
    const pausing: Db = Object.create(db, {
      transaction: {
        value: <T>(work: (tx: Tx) => Promise<T>) =>
          db.transaction((tx) => {
            let held = false;
            const query: Tx['query'] = async (text, values) => {
              const rows = await tx.query(text, values);
              if (!held && /\bFOR UPDATE\b|^\s*UPDATE\b/i.test(typeof text === 'string' ? text : text.text)) {
                held = true;
                holdingNow();
                await letGo;
              }
              return rows as never;
            };
            return work(Object.create(tx, { query: { value: query } }));
          }),
      },
    });
    const verifying = callerOf({ deps: { ...service.deps, db: pausing } }).auth.verifyEmail({ token: verifyToken });
    try {
      await holding;
      const resetting = callerOf(service).auth.resetPassword({ token, password: NEW_PASSWORD });
      await eventually('the reset to wait for a lock the verification holds', async () => {
        const [{ waiting }] = await db.query<{ waiting: number }>(`SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        return waiting > 0 || undefined;
      });
      letGoNow();
      const [verified, wasReset] = await Promise.allSettled([verifying, resetting]);
      assert.is(verified.status, 'fulfilled', String((verified as PromiseRejectedResult).reason));
      assert.is(wasReset.status, 'fulfilled', String((wasReset as PromiseRejectedResult).reason));
    } finally {
      letGoNow();
      await verifying.catch(() => undefined);
    }
    const loggedIn = await login(service, email, NEW_PASSWORD);
    assert.is(loggedIn.status, 200, loggedIn.text);
    const seen = await events(service, bearer(loggedIn.body.token));
    assert.is(seen.filter((event) => event === 'email.verified').length, 1, seen.join(', '));
    assert.ok(seen.includes('password.reset'), seen.join(', '));
    const [{ created }] = await db.query<{ created: number }>(`SELECT count(*)::int AS created FROM events WHERE type = 'account.created' AND account_id = $1`, [loggedIn.body.user.id]);
    assert.is(created, 1, 'account.created once');
  });
}

test('a reset voids pending registration links', async ({ service }) => {
  const email = 'reset.registration@example.com';
  const verifyToken = await registerForToken(service, email, { password: 'the registration password' });
  const token = await resetToken(service, email);
  assert.is((await reset(service, token, NEW_PASSWORD)).status, 200);
  assertError(await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token: verifyToken } }), 400, 'INVALID_TOKEN');
  assertError(await login(service, email, 'the registration password'), 401, 'INVALID_CREDENTIALS');
  assert.is((await login(service, email, NEW_PASSWORD)).status, 200);
});

test('a reset cancels a pending e-mail change: its link then answers 400 INVALID_TOKEN', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.moving@example.com');
  const newEmail = 'reset.moved@example.com';
  const requested = await request(service.url, 'POST', `${AUTH}/email/change`, { json: { new_email: newEmail, password: PASSWORD }, headers: bearer(account.token) });
  assert.is(requested.status, 200, requested.text);
  const changeToken = linkToken(await nextMail(service, newEmail, 0, /\/confirm-email\?token=/), '/confirm-email');

  const token = await resetToken(service, account.email);
  assert.is((await reset(service, token, NEW_PASSWORD)).status, 200);
  assertError(await request(service.url, 'POST', `${AUTH}/email/confirm`, { json: { token: changeToken } }), 400, 'INVALID_TOKEN');
  assert.is((await login(service, account.email, NEW_PASSWORD)).status, 200);
  assertError(await login(service, newEmail, NEW_PASSWORD), 401, 'INVALID_CREDENTIALS');
});

test('the notice after a reset says the API key was kept and offers its rotation; no subject carries the token or a password', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.notice@example.com');
  const token = await resetToken(service, account.email);
  const seen = service.smtp.mailsTo(account.email).length;
  assert.is((await reset(service, token, NEW_PASSWORD)).status, 200);
  const notice = await nextMail(service, account.email, seen, /password was reset/i);
  assert.match(notice.text, /API key/);
  assert.match(notice.text, /rotat/i);
  assert.match(notice.html, /API key/);
  assert.not.match(notice.text, RESET_LINK);
  for (const mail of service.smtp.mailsTo(account.email)) {
    for (const secret of [token, PASSWORD, NEW_PASSWORD, account.apiKey]) assert.not.match(mail.subject, secret, `subject "${mail.subject}"`);
    assert.not.match(mail.text, NEW_PASSWORD);
  }
});

test('a bad password in a reset (7 chars, 129 chars, a NUL, none) is 400 VALIDATION_FAILED naming password and does not use up the token', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.badpassword@example.com');
  const token = await resetToken(service, account.email);
  for (const bad of ['x'.repeat(7), 'x'.repeat(129), 'with a \u0000 inside', undefined]) {
    const result = await reset(service, token, bad);
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(result), ['password'], `for ${JSON.stringify(bad)}`);
  }
  assert.is(await tokenUsed(service, token), false);
  assert.is((await login(service, account.email, PASSWORD)).status, 200, 'the password is unchanged');

  const longest = 'p'.repeat(128);
  assert.is((await reset(service, token, longest)).status, 200);
  assert.is((await login(service, account.email, longest)).status, 200);
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

test('change password without credentials: 401 UNAUTHORIZED', async ({ service }) => {
  const body = { current_password: PASSWORD, new_password: NEW_PASSWORD };
  const anonymous = await change(service, {}, body);
  assertError(anonymous, 401, 'UNAUTHORIZED');
  assert.is(anonymous.headers.get('www-authenticate'), 'Bearer');
  assertError(await change(service, bearer('not-a-jwt'), body), 401, 'UNAUTHORIZED');
  assertError(await change(service, bearer('0'.repeat(64)), body), 401, 'UNAUTHORIZED');
});

test('change password with a wrong current_password: 401 INVALID_CREDENTIALS, nothing changes, and login.failed is in the activity', async ({ service }) => {
  const account = await registerAndVerify(service, 'change.wrong@example.com');
  const result = await change(service, bearer(account.token), { current_password: 'not the password', new_password: NEW_PASSWORD });
  assertError(result, 401, 'INVALID_CREDENTIALS');
  assert.is((await events(service, bearer(account.token)))[0], 'login.failed');
  assert.is((await me(service, bearer(account.token))).status, 200, 'a wrong password ends no session');
  assertError(await login(service, account.email, NEW_PASSWORD), 401, 'INVALID_CREDENTIALS');
  assert.is((await login(service, account.email, PASSWORD)).status, 200);
});

test('change password keeps the calling session, ends every other one; the new password logs in, the old one does not', async ({ service }) => {
  const account = await registerAndVerify(service, 'change.sessions@example.com');
  const other = await login(service, account.email);
  assert.is(other.status, 200);
  assert.is((await me(service, bearer(other.body.token))).status, 200);

  const result = await change(service, bearer(account.token), { current_password: PASSWORD, new_password: NEW_PASSWORD });
  assert.is(result.status, 200, result.text);
  assert.equal(result.body, { success: true });
  assert.is((await me(service, bearer(account.token))).status, 200, 'the calling session stays');
  assertError(await me(service, bearer(other.body.token)), 401, 'UNAUTHORIZED');
  assert.is(await liveSessions(service, account.user.id), 1);

  assertError(await login(service, account.email, PASSWORD), 401, 'INVALID_CREDENTIALS');
  assert.is((await login(service, account.email, NEW_PASSWORD)).status, 200);
  assert.ok((await events(service, bearer(account.token))).includes('password.changed'), 'password.changed is in the activity');
});

test('change password with the API key ends every session', async ({ service }) => {
  const account = await registerAndVerify(service, 'change.bykey@example.com');
  const other = await login(service, account.email);
  assert.is((await me(service, bearer(account.token))).status, 200);
  const result = await change(service, bearer(account.apiKey), { current_password: PASSWORD, new_password: NEW_PASSWORD });
  assert.is(result.status, 200, result.text);
  assertError(await me(service, bearer(account.token)), 401, 'UNAUTHORIZED');
  assertError(await me(service, bearer(other.body.token)), 401, 'UNAUTHORIZED');
  assert.is(await liveSessions(service, account.user.id), 0);
  assert.is((await me(service, bearer(account.apiKey))).status, 200, 'the API key is not a session');
  assert.is((await login(service, account.email, NEW_PASSWORD)).status, 200);
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

test('change password mails a notice; its subject carries no password', async ({ service }) => {
  const account = await registerAndVerify(service, 'change.notice@example.com');
  const seen = service.smtp.mailsTo(account.email).length;
  assert.is((await change(service, bearer(account.token), { current_password: PASSWORD, new_password: NEW_PASSWORD })).status, 200);
  const notice = await nextMail(service, account.email, seen, /password was changed/i);
  assert.match(notice.text, /other sessions were signed out/i);
  assert.match(notice.html, /password/i);
  for (const secret of [PASSWORD, NEW_PASSWORD, account.apiKey]) {
    assert.not.match(notice.subject, secret);
    assert.not.match(notice.text, secret);
  }
});

test('change password refuses garbage bodies with 400 VALIDATION_FAILED naming the fields', async ({ service }) => {
  const account = await registerAndVerify(service, 'change.garbage@example.com');
  const cases: Array<[unknown, string[]]> = [
    // current_password may be left out only by an account without a password (docs/API.md,
    // Identity providers): this one has one, so it is named with the rest.
    [{}, ['current_password', 'new_password']],
    [{ new_password: NEW_PASSWORD }, ['current_password']],
    [{ current_password: PASSWORD }, ['new_password']],
    [{ current_password: 5, new_password: true }, ['current_password', 'new_password']],
    [{ current_password: PASSWORD, new_password: 'x'.repeat(7) }, ['new_password']],
    [{ current_password: PASSWORD, new_password: 'x'.repeat(129) }, ['new_password']],
    [{ current_password: PASSWORD, new_password: 'nul \u0000 inside' }, ['new_password']],
    [{ current_password: '', new_password: NEW_PASSWORD }, ['current_password']],
  ];
  for (const [body, paths] of cases) {
    const result = await change(service, bearer(account.token), body);
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(result).sort(), paths, `for ${JSON.stringify(body)}`);
  }
  assert.is((await login(service, account.email, PASSWORD)).status, 200, 'nothing changed');
  assert.is((await me(service, bearer(account.token))).status, 200);
});

test('no mail subject in this suite carries a token or a password', async ({ service }) => {
  // Its own links (verification, reset), besides whatever the other tests had mailed.
  const account = await registerAndVerify(service, 'subjects@example.com');
  const seen = service.smtp.mailsTo(account.email).length;
  assert.is((await request(service.url, 'POST', `${AUTH}/password/forgot`, { json: { email: account.email } })).status, 200);
  await nextMail(service, account.email, seen, /reset-password\?token=/);
  const mails = service.smtp.inbox;
  const tokens = mails.flatMap((mail) => [...mail.text.matchAll(/token=([A-Za-z0-9_-]+)/g)].map((match) => match[1]));
  assert.ok(tokens.length >= 2, 'links were mailed');
  for (const mail of mails) {
    assert.not.match(mail.subject, /[A-Za-z0-9_-]{32,}/, mail.subject);
    for (const secret of [...tokens, PASSWORD, NEW_PASSWORD]) assert.not.ok(mail.subject.includes(secret), mail.subject);
  }
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
  const recorded = await events(service, bearer(account.token));
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
