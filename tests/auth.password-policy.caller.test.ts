import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PASSWORD, assertError, bearer, nextMail, registerAndVerify, tokenUsed, type Account } from './helpers/auth.ts';
import { resetToken } from './helpers/accounts.ts';
import { answerOf, callerOf, callerWith, loginCall as login } from './helpers/caller.ts';
import { BREACHED, COMMON, COMMON_PASSWORDS, DEEP, GOOD, PERSONAL, RANKED, assertRefused, sha1, startRangeApi, triedPasswords } from './helpers/password-policy.ts';
import { startTestApp, type TestService } from './helpers/service.ts';

// docs/SECURITY.md, Passwords: a new password (registration, reset, change) is refused when
// it is a common one or contains the address's local part or the name; with
// BREACHED_PASSWORD_CHECK=hibp it is also looked up, by the first 5 hex characters of its
// SHA-1 only, in a range API (here a stand-in on a local port). Passwords set before keep
// working. The procedures called in process; the refusal over tRPC, on the pages and to bodies
// no client sends in tests/auth.password-policy.rest.test.ts.

const passwords = triedPasswords();
const rangeApi = await startRangeApi();

/** Any input, as a client that ignores the types would send it, answered as REST would (a success is a 200 here). */
const register = (service: TestService, fields: Record<string, unknown>) => answerOf(callerOf(service).auth.register(fields as never));
const reset = (service: TestService, token: string, password: unknown) => answerOf(callerOf(service).auth.resetPassword({ token, password } as never));
const change = (service: TestService, account: Account, newPassword: unknown, currentPassword = account.password) =>
  answerOf(callerWith(service, bearer(account.token)).auth.changePassword({ current_password: currentPassword, new_password: newPassword } as never));

function registration(email: string, password: string, name = 'Test User'): Record<string, unknown> {
  passwords.add(password);
  return { email, password, name };
}

async function accountRows(service: TestService, email: string): Promise<number> {
  return (await service.deps.db.query('SELECT 1 FROM accounts WHERE email = $1', [email])).length;
}

const test = suite<{ service: TestService }>('password policy: common and personal passwords refused on register, reset and change');

test.before(async (context) => {
  context.service = await startTestApp({ HIBP_API_URL: rangeApi.url });
});
test.after(async ({ service }) => {
  await service?.close();
});

test('the list is the package one: a ranked list of tens of thousands, the deep pick past rank 9,000', () => {
  assert.ok(RANKED.length >= 10_000, `${RANKED.length} passwords`);
  assert.ok(RANKED.indexOf(DEEP) >= 9000, DEEP);
});

test('register: a common password, in any case, is 400 naming password; no account, no mail', async ({ service }) => {
  for (const [index, password] of COMMON_PASSWORDS.entries()) {
    const email = `common.register.${index}@example.com`;
    const result = await register(service, registration(email, password));
    assertRefused(result, 'password', COMMON, password);
    assert.is(await accountRows(service, email), 0);
  }
  // A later registration's mail arrives; a mail from a refused one would have been first.
  const email = 'common.register.0@example.com';
  assert.is((await register(service, registration(email, GOOD))).status, 200);
  await nextMail(service, email, 0);
  assert.is(service.smtp.mailsTo(email).length, 1, 'only the accepted registration mailed');
});

test('register: a taken address gets the same refusal as a new one, and its owner no mail', async ({ service }) => {
  const owner = await registerAndVerify(service, 'common.taken@example.com');
  const seen = service.smtp.mailsTo(owner.email).length;
  const taken = await register(service, registration(owner.email, 'password1'));
  const fresh = await register(service, registration('common.fresh@example.com', 'password1'));
  assertRefused(taken, 'password', COMMON);
  assert.equal(taken.body, fresh.body);
  assert.is(taken.status, fresh.status);
  assert.is((await register(service, registration(owner.email, GOOD))).status, 200);
  await nextMail(service, owner.email, seen);
  assert.is(service.smtp.mailsTo(owner.email).length, seen + 1, 'only the accepted attempt mailed the owner');
  assert.is((await login(service, owner.email)).status, 200, 'the account is unchanged');
});

test('register: a password containing the local part or the name (4+ chars, any case, NFC) is refused', async ({ service }) => {
  const cases: Array<[string, string, string]> = [
    ['winifred.marsh@example.com', 'my WINIFRED.MARSH key', 'Q'],
    ['wm42@example.com', 'horses Wm42 gallop', 'Q'],
    ['p.one@example.com', 'winifred marsh was here', 'Winifred Marsh'],
    ['p.two@example.com', 'i am WINIFRED MARSHal', 'Winifred Marsh'],
    ['p.three@example.com', 'rene\u0301e dubois loves paris', 'Ren\u00e9e Dubois'],
  ];
  for (const [email, password, name] of cases) {
    assertRefused(await register(service, registration(email, password, name)), 'password', PERSONAL, `${email} ${password}`);
    assert.is(await accountRows(service, email), 0);
  }
});

test('register: pieces of 3 characters are fine (local part ada, name Ada Ng), and so is one word of a longer name', async ({ service }) => {
  const result = await register(service, registration('ada@example.com', 'ada rides bicycles', 'Ada Ng'));
  assert.is(result.status, 200, result.text);
  const word = await register(service, registration('word.ok@example.com', 'a superuser on a bicycle', 'Test User'));
  assert.is(word.status, 200, word.text);
});

test('reset: a refused password leaves the link usable; a good one then works', async ({ service }) => {
  const account = await registerAndVerify(service, 'reset.policy@example.com', { name: 'Octavia Brightwater' });
  const token = await resetToken(service, account.email);
  for (const password of COMMON_PASSWORDS) assertRefused(await reset(service, token, password), 'password', COMMON, password);
  for (const password of ['reset.policy and more', 'octavia brightwater rides', 'OCTAVIA BRIGHTWATER lake']) {
    passwords.add(password);
    assertRefused(await reset(service, token, password), 'password', PERSONAL, password);
  }
  assert.is(await tokenUsed(service, token), false, 'the link is not spent');
  assert.is((await login(service, account.email, PASSWORD)).status, 200, 'the password is unchanged');
  const done = await reset(service, token, GOOD);
  assert.is(done.status, 200, done.text);
  assert.is((await login(service, account.email, GOOD)).status, 200);
});

test('change: after the current password, a common or personal new_password is 400 naming new_password', async ({ service }) => {
  const account = await registerAndVerify(service, 'change.policy@example.com', { name: 'Barnaby Quill' });
  for (const password of COMMON_PASSWORDS) assertRefused(await change(service, account, password), 'new_password', COMMON, password);
  for (const password of ['CHANGE.POLICY forever', 'barnaby quill the bear']) {
    passwords.add(password);
    assertRefused(await change(service, account, password), 'new_password', PERSONAL, password);
  }
  // The current password is checked first: a wrong one is still 401, whatever the new one.
  assertError(await change(service, account, 'password1', 'not the password'), 401, 'INVALID_CREDENTIALS');
  assert.is((await login(service, account.email, PASSWORD)).status, 200, 'the password is unchanged');
  assert.is((await change(service, account, GOOD)).status, 200);
  assert.is((await login(service, account.email, GOOD)).status, 200);
});

test('a weak password stored before the policy still logs in, and can be changed from', async ({ service }) => {
  const account = await registerAndVerify(service, 'legacy.weak@example.com');
  const hash = await service.deps.passwords.hash('password1');
  await service.deps.db.query('UPDATE accounts SET password_hash = $2 WHERE email = $1', [account.email, hash]);
  const loggedIn = await login(service, account.email, 'password1');
  assert.is(loggedIn.status, 200, loggedIn.text);
  const changed = await change(service, { ...account, token: loggedIn.body.token, password: 'password1' }, GOOD);
  assert.is(changed.status, 200, changed.text);
});


test('with the breach check off, the range API is never asked; the log holds no tried password', async ({ service }) => {
  assert.equal(rangeApi.seen, []);
  passwords.assertNotLogged(service);
});

test.run();

// ---------------------------------------------------------------------------------------------

const hibp = suite<{ service: TestService }>('password policy: BREACHED_PASSWORD_CHECK=hibp asks a range API by SHA-1 prefix only');

const LEAKED = 'tangerine submarine 1987';
const CLEAN = 'violet accordion thunder';
const tracked = [LEAKED, CLEAN];

hibp.before(async (context) => {
  for (const password of tracked) passwords.add(password);
  rangeApi.counts.set(sha1(LEAKED), 2417);
  // Listed with count 0, as padding lines are: not breached.
  rangeApi.counts.set(sha1(CLEAN), 0);
  context.service = await startTestApp({ BREACHED_PASSWORD_CHECK: 'hibp', HIBP_API_URL: rangeApi.url });
});
hibp.after(async ({ service }) => {
  await service?.close();
  await rangeApi.close();
});

/** The warning lines the check logs when it gives up. */
const warnings = (service: TestService) => service.logs.lines.filter((line) => line.includes('breached-password check failed'));

hibp('a breached password is refused on register, reset and change; a clean one (even listed with count 0) is accepted', async ({ service }) => {
  const warned = warnings(service).length;
  assertRefused(await register(service, registration('leaked.register@example.com', LEAKED)), 'password', BREACHED);
  assert.is(await accountRows(service, 'leaked.register@example.com'), 0);
  const account = await registerAndVerify(service, 'leaked.account@example.com', { password: CLEAN });
  assertRefused(await change(service, account, LEAKED), 'new_password', BREACHED);
  const token = await resetToken(service, account.email);
  assertRefused(await reset(service, token, LEAKED), 'password', BREACHED);
  assert.is(await tokenUsed(service, token), false);
  assert.is((await reset(service, token, GOOD)).status, 200);
  assert.equal(warnings(service).slice(warned), []);
});

hibp('the range API sees GET /range/<first 5 uppercase hex of the SHA-1>, with Add-Padding, and nothing else of the password', async ({ service }) => {
  // Its own registration asks the API, besides whatever the other tests asked.
  const asked = rangeApi.seen.length;
  passwords.add('juniper lighthouse meadow');
  assert.is((await register(service, registration('range.seen@example.com', 'juniper lighthouse meadow'))).status, 200);
  assert.ok(rangeApi.seen.length > asked, `${rangeApi.seen.length - asked} requests`);
  const prefixes = new Set([...passwords.tried].map((password) => sha1(password).slice(0, 5)));
  for (const seen of rangeApi.seen) {
    assert.is(seen.method, 'GET');
    assert.match(seen.url, /^\/range\/[0-9A-F]{5}$/);
    assert.ok(prefixes.has(seen.url.slice('/range/'.length)), seen.url);
    assert.is(seen.headers['add-padding'], 'true');
    assert.is(seen.body, '');
    const everything = JSON.stringify(seen);
    for (const password of passwords.tried) {
      assert.not.ok(everything.includes(password), `the API saw ${password}`);
      assert.not.ok(everything.includes(sha1(password).slice(5)), `the API saw the SHA-1 suffix of ${password}`);
    }
  }
});

hibp('a common password is refused without asking the range API', async ({ service }) => {
  const before = rangeApi.seen.length;
  assertRefused(await register(service, registration('common.hibp@example.com', 'password1')), 'password', COMMON);
  assert.is(rangeApi.seen.length, before);
});

hibp('a range API that hangs: the password is allowed after about 2 s, with a warning', async ({ service }) => {
  const warned = warnings(service).length;
  rangeApi.state.mode = 'hang';
  const started = performance.now();
  const result = await register(service, registration('hang.hibp@example.com', 'marmalade harbour lantern'));
  const elapsed = performance.now() - started;
  rangeApi.state.mode = 'answer';
  assert.is(result.status, 200, result.text);
  assert.ok(elapsed >= 1500 && elapsed < 15_000, `answered after ${Math.round(elapsed)} ms`);
  assert.is(warnings(service).length, warned + 1);
  assert.is(JSON.parse(warnings(service)[warned]).level, 'warn');
});

hibp('a range API that answers 500: the password is allowed, with a warning', async ({ service }) => {
  const before = warnings(service).length;
  rangeApi.state.mode = 'fail';
  const account = await registerAndVerify(service, 'fail.hibp@example.com');
  passwords.add('pelican orchard velvet');
  const result = await change(service, account, 'pelican orchard velvet');
  rangeApi.state.mode = 'answer';
  assert.is(result.status, 200, result.text);
  assert.is(warnings(service).length, before + 2, 'one for the registration, one for the change');
  assert.ok(warnings(service).every((line) => JSON.parse(line).level === 'warn'));
});

hibp('the log holds no tried password, SHA-1 or range path', async ({ service }) => {
  passwords.assertNotLogged(service);
  for (const line of warnings(service)) {
    assert.not.match(line, '/range/');
    for (const password of passwords.tried) assert.not.ok(line.includes(sha1(password).slice(5)), line);
  }
});

hibp.run();
