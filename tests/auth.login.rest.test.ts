import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, bearer, login, me, registerAndVerify, registerForToken } from './helpers/auth.ts';
import { liveSessions } from './helpers/accounts.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';

const test = suite<{ service: TestService }>('REST login and logout: POST /api/v1/auth/login, /logout');

test.before(async (context) => {
  // Stored hashes' parameters and login timing are about argon2's real cost.
  context.service = await startTestApp({}, { realPasswordCost: true });
});
test.after(async ({ service }) => {
  await service?.close();
});

const THIRTY_DAYS = 30 * 24 * 3600;

test('success: 200 {success, token, user}, the exact session cookie and a signed device cookie', async ({ service }) => {
  const account = await registerAndVerify(service, 'login.ok@example.com');
  const result = await login(service, '  Login.OK@Example.com ', PASSWORD);
  assert.is(result.status, 200);
  assert.equal(Object.keys(result.body).sort(), ['success', 'token', 'user']);
  assert.is(result.body.success, true);
  assert.equal(result.body.user, account.user);
  assert.match(result.body.token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  assert.is.not(result.body.token, account.token);
  const [session, device, ...others] = result.headers.getSetCookie();
  assert.is(session, `svc_token=${result.body.token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${THIRTY_DAYS}`);
  assert.match(device, new RegExp(`^svc_device=d1\\.${account.user.id}\\.[\\w-]{22}\\.[\\w-]{43}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${365 * 24 * 3600}$`));
  assert.equal(others, []);
  assert.is((await me(service, bearer(result.body.token))).status, 200);
});

test("the API reference shows the session cookie as login sets it and logout clears it", async ({ service }) => {
  const paths = (await request(service.url, 'GET', '/api/v1/openapi.json')).body.paths;
  const shown = (path: string) => String(paths[path].post.responses['200'].headers['Set-Cookie'].schema.description);
  const account = await registerAndVerify(service, 'login.shown@example.com');
  const signedIn = await login(service, account.email, PASSWORD);
  const [session] = signedIn.headers.getSetCookie();
  const placeholders = session.replace(signedIn.body.token, '<jwt>').replace(`Max-Age=${THIRTY_DAYS}`, 'Max-Age=<JWT_TTL s>');
  assert.ok(shown('/auth/login').startsWith(`${placeholders}, plus Secure over https.`), shown('/auth/login'));
  const loggedOut = await request(service.url, 'POST', `${AUTH}/logout`, { headers: bearer(signedIn.body.token) });
  assert.equal(loggedOut.headers.getSetCookie(), [shown('/auth/logout')]);
});

test('unknown e-mail and wrong password: the same 401 body, no cookie', async ({ service }) => {
  await registerAndVerify(service, 'login.wrong@example.com');
  const unknown = await login(service, 'login.nobody@example.com', PASSWORD);
  const wrong = await login(service, 'login.wrong@example.com', `${PASSWORD}!`);
  assertError(unknown, 401, 'INVALID_CREDENTIALS');
  assert.equal(wrong.body, unknown.body);
  assert.is(wrong.status, unknown.status);
  assert.equal(wrong.headers.getSetCookie(), []);
  assert.equal(unknown.headers.getSetCookie(), []);
  assert.is(wrong.headers.get('www-authenticate'), unknown.headers.get('www-authenticate'));
});

test('EMAIL_NOT_VERIFIED is said only after the password matched', async ({ service }) => {
  const email = 'login.unverified@example.com';
  await registerForToken(service, email);
  const unknown = await login(service, 'login.nobody@example.com', PASSWORD);
  const wrong = await login(service, email, 'not the right password');
  assert.is(wrong.status, 401);
  assert.equal(wrong.body, unknown.body);
  const right = await login(service, email, PASSWORD);
  assertError(right, 403, 'EMAIL_NOT_VERIFIED');
  assert.equal(right.headers.getSetCookie(), []);
  assert.not.match(right.text, /"token"/);
});

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

test('unknown e-mail and wrong password both pay for an argon2 verification', async ({ service }) => {
  await registerAndVerify(service, 'login.timing@example.com');
  // Coarse on purpose: load on the machine only adds time, so the fastest of several rounds
  // must still cost a good part of one argon2 verification (capped at 4 ms when the
  // reference itself was slowed down); a login that skipped argon2 takes a millisecond or two.
  const reference: number[] = [];
  const unknown: number[] = [];
  const wrong: number[] = [];
  for (let round = 0; round < 6; round++) {
    reference.push(await timed(() => service.deps.passwords.verifyDummy('x'.repeat(12))));
    unknown.push(await timed(() => login(service, `login.timing.${round}@example.com`, 'wrong password')));
    wrong.push(await timed(() => login(service, 'login.timing@example.com', 'wrong password')));
  }
  const floor = Math.min(4, Math.min(...reference) / 2);
  assert.ok(Math.min(...wrong) >= floor, `wrong password took ${wrong.join(', ')} ms; argon2 alone ${reference.join(', ')} ms`);
  assert.ok(Math.min(...unknown) >= floor, `unknown e-mail took ${unknown.join(', ')} ms; argon2 alone ${reference.join(', ')} ms`);
});

test('unknown e-mail and wrong password each run exactly one argon2 verification', async ({ service }) => {
  await registerAndVerify(service, 'login.counted@example.com');
  const original = service.deps.passwords;
  let verifications = 0;
  service.deps.passwords = {
    ...original,
    verify: (hash, password) => ((verifications += 1), original.verify(hash, password)),
    verifyDummy: (password) => ((verifications += 1), original.verifyDummy(password)),
  };
  try {
    for (const email of ['login.counted.nobody@example.com', 'login.counted@example.com']) {
      verifications = 0;
      assert.is((await login(service, email, 'wrong password')).status, 401);
      assert.is(verifications, 1, email);
    }
  } finally {
    service.deps.passwords = original;
  }
});

test('argon2 runs off the event loop: the loop keeps turning while a hash is computed', async ({ service }) => {
  const { passwords } = service.deps;
  const stored = await passwords.hash(PASSWORD);
  for (const work of [() => passwords.hash(PASSWORD), () => passwords.verify(stored, PASSWORD)]) {
    let settled = false;
    const running = work().finally(() => (settled = true));
    let turns = 0;
    while (!settled) {
      await new Promise((resolve) => setImmediate(resolve));
      turns += 1;
    }
    await running;
    // Hashing on the loop itself would settle before, or within a turn or two of, the first one.
    assert.ok(turns >= 5, `the event loop turned ${turns} times during a hash`);
  }
});

test('validation: a malformed address or an over-long password is 400, never a credential check', async ({ service }) => {
  assertError(await login(service, 'not-an-address', PASSWORD), 400, 'VALIDATION_FAILED');
  assertError(await login(service, 'login.ok@example.com', 'p'.repeat(129)), 400, 'VALIDATION_FAILED');
  assertError(await request(service.url, 'POST', `${AUTH}/login`, { json: { email: 'login.ok@example.com' } }), 400, 'VALIDATION_FAILED');
});

test('logout revokes only this session and clears the cookie', async ({ service }) => {
  const account = await registerAndVerify(service, 'logout@example.com');
  const other = (await login(service, account.email)).body.token;
  const result = await request(service.url, 'POST', `${AUTH}/logout`, { headers: bearer(account.token) });
  assert.is(result.status, 200);
  assert.equal(result.body, { success: true });
  assert.equal(result.headers.getSetCookie(), ['svc_token=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0']);

  assertError(await me(service, bearer(account.token)), 401, 'UNAUTHORIZED');
  assertError(await request(service.url, 'POST', `${AUTH}/logout`, { headers: bearer(account.token) }), 401, 'UNAUTHORIZED');
  assert.is((await me(service, bearer(other))).status, 200);
  assert.is((await me(service, bearer(account.apiKey))).status, 200);
});

test('logout with the session cookie', async ({ service }) => {
  const account = await registerAndVerify(service, 'logout.cookie@example.com');
  const cookie = { cookie: `svc_token=${account.token}` };
  const result = await request(service.url, 'POST', `${AUTH}/logout`, { headers: cookie, json: {} });
  assert.is(result.status, 200);
  assert.equal(result.headers.getSetCookie(), ['svc_token=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0']);
  assertError(await me(service, cookie), 401, 'UNAUTHORIZED');
});

test('logout needs a session: without credentials or with an API key it is 401', async ({ service }) => {
  const account = await registerAndVerify(service, 'logout.key@example.com');
  const anonymous = await request(service.url, 'POST', `${AUTH}/logout`);
  assertError(anonymous, 401, 'UNAUTHORIZED');
  assert.is(anonymous.headers.get('www-authenticate'), 'Bearer');
  assertError(await request(service.url, 'POST', `${AUTH}/logout`, { headers: bearer(account.apiKey) }), 401, 'UNAUTHORIZED');
  assert.is((await me(service, bearer(account.token))).status, 200);
});

test('sessions are stored server-side and a login creates one', async ({ service }) => {
  const account = await registerAndVerify(service, 'sessions@example.com');
  assert.is(await liveSessions(service, account.user.id), 1);
  await login(service, account.email);
  assert.is(await liveSessions(service, account.user.id), 2);
});

test.run();
