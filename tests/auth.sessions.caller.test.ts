import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertError, bearer, issuePaths, registerAndVerify, type Account } from './helpers/auth.ts';
import { answerOf, callerOf, loginCall as login, meCall as me } from './helpers/caller.ts';
import { startTestApp, type TestService } from './helpers/service.ts';

// docs/API.md, Account lifecycle (Sessions): the rules of auth.listSessions, auth.revokeSession
// and auth.revokeAllSessions, called in process. What HTTP adds (no credentials, no-store, an id
// in the path) and how a session's last use is written are tested over REST in
// tests/auth.sessions.rest.test.ts.

const test = suite<{ service: TestService }>('auth.listSessions, auth.revokeSession and auth.revokeAllSessions: which sessions live, and who ends them');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const MINUTE = 60_000;

/** As the holder of `credential` (a JWT or an API key). */
const as = (service: TestService, credential: string) => callerOf(service, { bearer: credential });
const list = async (service: TestService, credential: string) => (await as(service, credential).auth.listSessions()).sessions;
/** Any input, as a client that ignores the types would send it. */
const revoke = (service: TestService, credential: string, id: unknown) => answerOf(as(service, credential).auth.revokeSession({ id } as never));
const revokeAll = (service: TestService, credential: string, input?: unknown) => answerOf(as(service, credential).auth.revokeAllSessions(input as never));

/** A login from a chosen address and user agent; its session token. */
async function loginAs(service: TestService, account: Account, ip: string, userAgent: string): Promise<string> {
  return (await callerOf(service, {}, { ip, userAgent }).auth.login({ email: account.email, password: account.password })).token;
}

/** A further session of `account`. */
async function anotherSession(service: TestService, account: Account): Promise<string> {
  const result = await login(service, account.email, account.password);
  assert.is(result.status, 200, result.text);
  return result.body.token;
}

const sessionIdOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid as string;

test('the live sessions, newest first, with where they were opened; `current` marks the calling JWT', async ({ service }) => {
  const account = await registerAndVerify(service, 'sessions.list@example.com');
  service.clock.advance(MINUTE);
  const phone = await loginAs(service, account, '127.0.60.2', 'Phone/1.0');
  service.clock.advance(MINUTE);
  const laptop = await loginAs(service, account, '127.0.60.3', 'Laptop/2.0');

  const answer = await as(service, phone).auth.listSessions();
  assert.equal(Object.keys(answer).sort(), ['sessions', 'success']);
  const sessions = answer.sessions;
  assert.equal(sessions.map((s) => s.id), [sessionIdOf(laptop), sessionIdOf(phone), sessionIdOf(account.token)]);
  assert.equal(Object.keys(sessions[0]).sort(), ['created_at', 'current', 'id', 'ip', 'last_used_at', 'user_agent', 'via']);
  assert.equal(sessions.map((s) => s.via), ['password', 'password', 'password'], 'each session says how it began');
  assert.equal(sessions.map((s) => s.current), [false, true, false]);
  assert.equal(sessions.map((s) => s.ip), ['127.0.60.3', '127.0.60.2', '127.0.0.1']);
  assert.equal(sessions.slice(0, 2).map((s) => s.user_agent), ['Laptop/2.0', 'Phone/1.0']);
  assert.is(sessions[0].created_at, service.clock.now().toISOString());
  assert.is(sessions[1].created_at, new Date(service.clock.now().getTime() - MINUTE).toISOString());

  const byKey = await list(service, account.apiKey);
  assert.equal(byKey.map((s) => s.current), [false, false, false], 'an API key has no session of its own');
});

test('revoked and expired sessions are not listed', async ({ service }) => {
  const account = await registerAndVerify(service, 'sessions.expired@example.com');
  const second = await anotherSession(service, account);
  assert.is((await revoke(service, account.token, sessionIdOf(second))).status, 200);
  assert.equal((await list(service, account.apiKey)).map((s) => s.id), [sessionIdOf(account.token)]);
  service.clock.advance(30 * 24 * 60 * MINUTE);
  assert.equal(await list(service, account.apiKey), []);
});

test("revoking one session ends it at once; the others go on; a second revoke, or another account's session, is 404", async ({ service }) => {
  const account = await registerAndVerify(service, 'sessions.revoke@example.com');
  const other = await anotherSession(service, account);
  assert.is((await me(service, bearer(other))).status, 200, 'cached before the revocation');
  const revoked = await revoke(service, account.token, sessionIdOf(other));
  assert.is(revoked.status, 200);
  assert.equal(revoked.body, { success: true });
  assertError(await me(service, bearer(other)), 401, 'UNAUTHORIZED');
  assert.is((await me(service, bearer(account.token))).status, 200);
  assertError(await revoke(service, account.token, sessionIdOf(other)), 404, 'NOT_FOUND');

  const stranger = await registerAndVerify(service, 'sessions.stranger@example.com');
  assertError(await revoke(service, account.token, sessionIdOf(stranger.token)), 404, 'NOT_FOUND');
  assert.is((await me(service, bearer(stranger.token))).status, 200, "another account's session is untouched");
  for (const unknown of ['nope', '00000000-0000-0000-0000-000000000000', 'a'.repeat(100)]) {
    assertError(await revoke(service, account.token, unknown), 404, 'NOT_FOUND');
  }
  for (const malformed of ['a'.repeat(101), '', 42]) {
    const refused = await revoke(service, account.token, malformed);
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(refused), ['id'], `for ${JSON.stringify(malformed)}`);
  }
  assert.is((await revoke(service, account.token, sessionIdOf(account.token).toUpperCase())).status, 200, 'its own, in capitals');
  assertError(await me(service, bearer(account.token)), 401, 'UNAUTHORIZED');
});

test('revoke-all keeps the calling session by default, ends it too with keep_current false, and every one with an API key', async ({ service }) => {
  const account = await registerAndVerify(service, 'sessions.all@example.com');
  const tokens = [account.token];
  for (let i = 0; i < 3; i++) tokens.push(await anotherSession(service, account));

  assert.equal((await revokeAll(service, tokens[0])).body, { success: true, revoked: 3 });
  assert.is((await me(service, bearer(tokens[0]))).status, 200);
  for (const token of tokens.slice(1)) assertError(await me(service, bearer(token)), 401, 'UNAUTHORIZED');

  const more = await anotherSession(service, account);
  assert.equal((await revokeAll(service, more, { keep_current: false })).body, { success: true, revoked: 2 });
  assertError(await me(service, bearer(more)), 401, 'UNAUTHORIZED');
  assertError(await me(service, bearer(tokens[0])), 401, 'UNAUTHORIZED');

  const last = await anotherSession(service, account);
  assert.equal((await revokeAll(service, account.apiKey, {})).body, { success: true, revoked: 1 });
  assertError(await me(service, bearer(last)), 401, 'UNAUTHORIZED');
  assert.equal((await revokeAll(service, account.apiKey)).body, { success: true, revoked: 0 });

  for (const keep of ['false', 0, null, 'yes']) {
    const result = await revokeAll(service, account.apiKey, { keep_current: keep });
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(result), ['keep_current']);
  }
});

test.run();
