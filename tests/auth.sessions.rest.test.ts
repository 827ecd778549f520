import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, assertError, bearer, login, me, registerAndVerify } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';
import { sessionTouchesOf } from '../server/src/modules/sessions/sessions.touches.ts';

// GET /sessions, DELETE /sessions/{id}, POST /sessions/revoke-all (docs/API.md, Account lifecycle)
// over REST: what HTTP adds to the rules tested in process in tests/auth.sessions.caller.test.ts,
// and how a session's last use is recorded: never by the request that uses it.

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

const sessionIdOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid as string;

test('over REST: each route wants a credential (401), the list is no-store, an id in the path revokes or, when it cannot be one, is 400, and revoke-all takes no body', async ({ service }) => {
  const account = await registerAndVerify(service, 'sessions.rest@example.com');
  for (const [method, path] of [['GET', 'sessions'], ['DELETE', `sessions/${sessionIdOf(account.token)}`], ['POST', 'sessions/revoke-all']] as const) {
    const refused = await request(service.url, method, `${AUTH}/${path}`);
    assertError(refused, 401, 'UNAUTHORIZED');
    assert.is(refused.headers.get('www-authenticate'), 'Bearer', `${method} ${path}`);
  }

  service.clock.advance(MINUTE);
  const other = (await login(service, account.email, account.password)).body.token;
  const listed = await list(service, account.token);
  assert.is(listed.status, 200, listed.text);
  assert.is(listed.headers.get('cache-control'), 'no-store');
  assert.equal(listed.body.sessions.map((s: { id: string; current: boolean }) => [s.id, s.current]), [
    [sessionIdOf(other), false],
    [sessionIdOf(account.token), true],
  ]);

  for (const id of ['a'.repeat(101), 'x%00y']) assertError(await revoke(service, account.token, id), 400, 'VALIDATION_FAILED');
  const third = (await login(service, account.email, account.password)).body.token;
  const revoked = await revoke(service, account.token, sessionIdOf(third));
  assert.is(revoked.status, 200, revoked.text);
  assert.equal(revoked.body, { success: true });
  assertError(await me(service, bearer(third)), 401, 'UNAUTHORIZED');
  const bare = await request(service.url, 'POST', `${AUTH}/sessions/revoke-all`, { headers: bearer(account.token) });
  assert.is(bare.status, 200, bare.text);
  assert.equal(bare.body, { success: true, revoked: 1 }, 'no body: the calling session is kept');
  assert.is((await me(service, bearer(account.token))).status, 200);
  assertError(await me(service, bearer(other)), 401, 'UNAUTHORIZED');
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
  test('a session revoked on one instance is refused by another, by its notice', async ({ service }) => {
    const other = await startTestApp({}, { joining: service });
    try {
      const account = await registerAndVerify(service, 'sessions.instances@example.com');
      const second = (await login(service, account.email, account.password)).body.token;
      assert.is((await me(other, bearer(second))).status, 200, 'cached on the other instance');
      assert.is((await revoke(service, account.token, sessionIdOf(second))).status, 200);
      await eventually('the revoked session refused on the other instance', async () => (await me(other, bearer(second))).status === 401);
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
      await eventually('the revocation notified', () => notices.includes(String(account.user.id)));
      assert.equal(notices.filter((notice) => notice === String(account.user.id)), [String(account.user.id)], 'the last_used_at write was silent: one notice, the revocation\'s');
    } finally {
      await listener.end();
    }
  });
}

test.run();
