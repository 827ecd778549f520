import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, assertError, bearer, issuePaths, login, me, registerAndVerify, requestFrom, type Account } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';
import { sessionTouchesOf } from '../server/src/modules/sessions/sessions.touches.ts';

// GET /sessions, DELETE /sessions/{id}, POST /sessions/revoke-all (docs/API.md, Account lifecycle), and
// how a session's last use is recorded: never by the request that uses it.

const onServer = Boolean(process.env.DATABASE_URL);
const test = suite<{ service: TestService }>('REST sessions: list, revoke one, revoke all, last use');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const MINUTE = 60_000;

const list = (service: TestService, credential: string) => request(service.url, 'GET', `${AUTH}/sessions`, { headers: bearer(credential) });
const revoke = (service: TestService, credential: string, id: string) =>
  request(service.url, 'DELETE', `${AUTH}/sessions/${id}`, { headers: bearer(credential) });
const revokeAll = (service: TestService, credential: string, body: unknown = {}) =>
  request(service.url, 'POST', `${AUTH}/sessions/revoke-all`, { json: body, headers: bearer(credential) });

/** A login from a chosen address and user agent; its session token. */
async function loginAs(service: TestService, account: Account, ip: string, userAgent: string): Promise<string> {
  const result = await requestFrom(ip, service.url, 'POST', `${AUTH}/login`, { json: { email: account.email, password: account.password }, headers: { 'user-agent': userAgent } });
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

  const listed = await list(service, phone);
  assert.is(listed.status, 200);
  assert.is(listed.headers.get('cache-control'), 'no-store');
  assert.equal(Object.keys(listed.body).sort(), ['sessions', 'success']);
  const sessions = listed.body.sessions;
  assert.equal(sessions.map((s: { id: string }) => s.id), [sessionIdOf(laptop), sessionIdOf(phone), sessionIdOf(account.token)]);
  assert.equal(Object.keys(sessions[0]).sort(), ['created_at', 'current', 'id', 'ip', 'last_used_at', 'user_agent', 'via']);
  assert.equal(sessions.map((s: { via: string }) => s.via), ['password', 'password', 'password'], 'each session says how it began');
  assert.equal(sessions.map((s: { current: boolean }) => s.current), [false, true, false]);
  assert.equal(sessions.map((s: { ip: string }) => s.ip), ['127.0.60.3', '127.0.60.2', '127.0.0.1']);
  assert.equal(sessions.slice(0, 2).map((s: { user_agent: string }) => s.user_agent), ['Laptop/2.0', 'Phone/1.0']);
  assert.is(sessions[0].created_at, service.clock.now().toISOString());
  assert.is(sessions[1].created_at, new Date(service.clock.now().getTime() - MINUTE).toISOString());

  const byKey = (await list(service, account.apiKey)).body.sessions;
  assert.equal(byKey.map((s: { current: boolean }) => s.current), [false, false, false], 'an API key has no session of its own');
});

test('revoked and expired sessions are not listed', async ({ service }) => {
  const account = await registerAndVerify(service, 'sessions.expired@example.com');
  const second = (await login(service, account.email, account.password)).body.token;
  assert.is((await revoke(service, account.token, sessionIdOf(second))).status, 200);
  assert.equal((await list(service, account.apiKey)).body.sessions.map((s: { id: string }) => s.id), [sessionIdOf(account.token)]);
  service.clock.advance(30 * 24 * 60 * MINUTE);
  assert.equal((await list(service, account.apiKey)).body.sessions, []);
});

test('revoking one session ends it at once; the others go on; a second revoke, or another account\'s session, is 404', async ({ service }) => {
  const account = await registerAndVerify(service, 'sessions.revoke@example.com');
  const other = (await login(service, account.email, account.password)).body.token;
  assert.is((await me(service, bearer(other))).status, 200, 'cached before the revocation');
  const revoked = await revoke(service, account.token, sessionIdOf(other));
  assert.is(revoked.status, 200);
  assert.equal(revoked.body, { success: true });
  assertError(await me(service, bearer(other)), 401, 'UNAUTHORIZED');
  assert.is((await me(service, bearer(account.token))).status, 200);
  assertError(await revoke(service, account.token, sessionIdOf(other)), 404, 'NOT_FOUND');

  const stranger = await registerAndVerify(service, 'sessions.stranger@example.com');
  assertError(await revoke(service, account.token, sessionIdOf(stranger.token)), 404, 'NOT_FOUND');
  assert.is((await me(service, bearer(stranger.token))).status, 200, 'another account\'s session is untouched');
  for (const garbage of ['nope', '00000000-0000-0000-0000-000000000000', 'a'.repeat(100)]) {
    assertError(await revoke(service, account.token, garbage), 404, 'NOT_FOUND');
  }
  assertError(await revoke(service, account.token, 'a'.repeat(101)), 400, 'VALIDATION_FAILED');
  assertError(await revoke(service, account.token, 'x%00y'), 400, 'VALIDATION_FAILED');
  assertError(await request(service.url, 'DELETE', `${AUTH}/sessions/${sessionIdOf(account.token)}`), 401, 'UNAUTHORIZED');
  assert.is((await revoke(service, account.token, sessionIdOf(account.token).toUpperCase())).status, 200, 'its own, in capitals');
  assertError(await me(service, bearer(account.token)), 401, 'UNAUTHORIZED');
});

test('revoke-all keeps the calling session by default, ends it too with keep_current false, and every one with an API key', async ({ service }) => {
  const account = await registerAndVerify(service, 'sessions.all@example.com');
  const tokens = [account.token];
  for (let i = 0; i < 3; i++) tokens.push((await login(service, account.email, account.password)).body.token);

  const kept = await revokeAll(service, tokens[0]);
  assert.equal(kept.body, { success: true, revoked: 3 });
  assert.is((await me(service, bearer(tokens[0]))).status, 200);
  for (const token of tokens.slice(1)) assertError(await me(service, bearer(token)), 401, 'UNAUTHORIZED');

  const more = (await login(service, account.email, account.password)).body.token;
  assert.equal((await revokeAll(service, more, { keep_current: false })).body, { success: true, revoked: 2 });
  assertError(await me(service, bearer(more)), 401, 'UNAUTHORIZED');
  assertError(await me(service, bearer(tokens[0])), 401, 'UNAUTHORIZED');

  const last = (await login(service, account.email, account.password)).body.token;
  assert.equal((await revokeAll(service, account.apiKey)).body, { success: true, revoked: 1 });
  assertError(await me(service, bearer(last)), 401, 'UNAUTHORIZED');
  assert.equal((await revokeAll(service, account.apiKey)).body, { success: true, revoked: 0 });

  for (const keep of ['false', 0, null, 'yes']) {
    const result = await revokeAll(service, account.apiKey, { keep_current: keep });
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(result), ['keep_current']);
  }
});

test('/me writes nothing itself: a session\'s use is noted and written off the request path, at most once a minute', async ({ service }) => {
  const account = await registerAndVerify(service, 'sessions.touch@example.com');
  const id = sessionIdOf(account.token);
  const lastUsed = async () =>
    (await service.deps.db.query<{ last_used_at: Date }>('SELECT last_used_at FROM sessions WHERE id = $1', [id]))[0].last_used_at.toISOString();
  const loggedInAt = service.clock.now().toISOString();
  assert.is(await lastUsed(), loggedInAt, 'a login is a use');

  service.clock.advance(MINUTE + 1000);
  const usedAt = service.clock.now().toISOString();
  assert.is((await me(service, bearer(account.token))).status, 200);
  assert.is(await lastUsed(), loggedInAt, 'not written by the request');
  assert.is((await list(service, account.apiKey)).body.sessions[0].last_used_at, usedAt, 'but listed at once');
  await sessionTouchesOf(service.deps).flush();
  assert.is(await lastUsed(), usedAt, 'written by the flush');

  service.clock.advance(30_000);
  await me(service, bearer(account.token));
  await sessionTouchesOf(service.deps).flush();
  assert.is(await lastUsed(), usedAt, 'half a minute later: not written again');

  service.clock.advance(30_000);
  await me(service, bearer(account.token));
  await sessionTouchesOf(service.deps).flush();
  assert.is(await lastUsed(), service.clock.now().toISOString(), 'a minute later: written');
});

if (onServer) {
  test('a session revoked on one instance is refused by another within a second', async ({ service }) => {
    const other = await startTestApp({}, { joining: service });
    try {
      const account = await registerAndVerify(service, 'sessions.instances@example.com');
      const second = (await login(service, account.email, account.password)).body.token;
      assert.is((await me(other, bearer(second))).status, 200, 'cached on the other instance');
      assert.is((await revoke(service, account.token, sessionIdOf(second))).status, 200);
      await eventually('the revoked session refused on the other instance', async () => (await me(other, bearer(second))).status === 401, 1_000);
      assert.is((await revokeAll(service, account.token)).status, 200);
    } finally {
      await other.close();
    }
  });

  test('recording a use notifies no instance (their /me caches stay); a revocation does', async ({ service }) => {
    const account = await registerAndVerify(service, 'sessions.quiet@example.com');
    const listener = new pg.Client({ connectionString: service.env.DATABASE_URL });
    await listener.connect();
    const notices: string[] = [];
    listener.on('notification', (message) => notices.push(message.payload ?? ''));
    await listener.query('LISTEN gatehouse_auth');
    try {
      service.clock.advance(2 * MINUTE);
      await me(service, bearer(account.token));
      await sessionTouchesOf(service.deps).flush();
      // Notices come in the order their transactions committed: once the revocation's is
      // here, one the write had sent before it would be here too.
      await revoke(service, account.token, sessionIdOf(account.token));
      await eventually('the revocation notified', () => notices.includes(String(account.user.id)), 1_000);
      assert.equal(notices.filter((notice) => notice === String(account.user.id)), [String(account.user.id)], 'the last_used_at write was silent: one notice, the revocation\'s');
    } finally {
      await listener.end();
    }
  });
}

test.run();
