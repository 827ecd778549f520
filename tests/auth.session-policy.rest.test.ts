import { decodeJwt, SignJWT } from 'jose';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { jwtKeyId } from '../server/src/lib/jwt.ts';
import { authCacheOf, sessionCacheKey } from '../server/src/modules/sessions/sessions.cache.ts';
import { sessionTouchesOf } from '../server/src/modules/sessions/sessions.touches.ts';
import { AUTH, assertError, bearer, login, me, registerAndVerify } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// Session policy (docs/SECURITY.md, Sessions): SESSION_IDLE_TIMEOUT ends a session nobody
// used for that long, JWT_TTL still ends every session, and a JWT names PUBLIC_URL as its
// audience. Time moves on the service's test clock.

const onServer = Boolean(process.env.DATABASE_URL);
const SECOND = 1000;
const DAY = 24 * 3600 * SECOND;

const test = suite<{ service: TestService }>('REST session policy: idle timeout, absolute lifetime, audience');

/** On PostgreSQL the /me cache must be listening, or a test of it would test the database. */
async function started(service: TestService): Promise<TestService> {
  if (onServer) await eventually('the auth cache listening', () => authCacheOf(service.deps).enabled);
  return service;
}

test.before(async (context) => {
  context.service = await started(await startTestApp());
});
test.after(async ({ service }) => {
  await service?.close();
});

/** Runs `work` on the service restarted with `changes`, then restarts it as the suite had it (SESSION_IDLE_TIMEOUT's default, 14 days). */
async function restartedFor(context: { service: TestService }, changes: Record<string, string>, work: (service: TestService) => Promise<void>) {
  context.service = await started(await context.service.restart(changes));
  try {
    await work(context.service);
  } finally {
    context.service = await started(await context.service.restart({ SESSION_IDLE_TIMEOUT: '14d' }));
  }
}

const sessionIdOf = (token: string) => String(decodeJwt(token).sid);
const listed = async (service: TestService, credential: string) =>
  (await request(service.url, 'GET', `${AUTH}/sessions`, { headers: bearer(credential) })).body.sessions.map((s: { id: string }) => s.id) as string[];
const trpcMe = (service: TestService, token: string) => request(service.url, 'GET', '/trpc/auth.me', { headers: bearer(token) });
const accountPage = (service: TestService, token: string) => request(service.url, 'GET', '/account', { headers: { cookie: `svc_token=${token}` } });
const cachedSession = (service: TestService, token: string) => authCacheOf(service.deps).get(sessionCacheKey(sessionIdOf(token)));

/** Asserts that `token` is refused everywhere sessions are authenticated: REST, tRPC and the pages. */
async function assertRefused(service: TestService, token: string) {
  assertError(await me(service, bearer(token)), 401, 'UNAUTHORIZED');
  const viaTrpc = await trpcMe(service, token);
  assert.is(viaTrpc.status, 401);
  assert.is(viaTrpc.body.error.data.appCode, 'UNAUTHORIZED');
  const page = await accountPage(service, token);
  assert.is(page.status, 303);
  assert.is(page.headers.get('location'), '/login?next=/account');
}

test('by default a session unused for 14 days is over: 401 on REST, tRPC and the pages, and no longer listed', async ({ service }) => {
  const account = await registerAndVerify(service, 'idle.default@example.com');
  const idle = (await login(service, account.email, account.password)).body.token as string;
  assert.is((await me(service, bearer(idle))).status, 200);

  service.clock.advance(13 * DAY);
  assert.is((await me(service, bearer(account.token))).status, 200, '13 days: not yet');
  service.clock.advance(DAY);
  await assertRefused(service, idle);
  assert.is((await me(service, bearer(account.token))).status, 200, 'used a day ago: alive');
  assert.equal(await listed(service, account.token), [sessionIdOf(account.token)]);
  assert.equal(await listed(service, account.apiKey), [sessionIdOf(account.token)]);
});

test('a refused request does not revive its session: the use is noted only after the check', async ({ service }) => {
  const account = await registerAndVerify(service, 'idle.norevive@example.com');
  service.clock.advance(14 * DAY + SECOND);
  assertError(await me(service, bearer(account.token)), 401, 'UNAUTHORIZED');
  assert.is(sessionTouchesOf(service.deps).pending(sessionIdOf(account.token)), undefined);
  await sessionTouchesOf(service.deps).flush();
  assertError(await me(service, bearer(account.token)), 401, 'UNAUTHORIZED');
});

test('use moves the idle deadline: a busy session lives past 14 days, until JWT_TTL (30d) ends it anyway', async ({ service }) => {
  const account = await registerAndVerify(service, 'idle.busy@example.com');
  const sid = sessionIdOf(account.token);
  service.clock.advance(10 * DAY);
  assert.is((await me(service, bearer(account.token))).status, 200, 'day 10');
  await sessionTouchesOf(service.deps).flush();
  service.clock.advance(10 * DAY);
  assert.is((await me(service, bearer(account.token))).status, 200, 'day 20: ten days after a use that was written');
  service.clock.advance(9 * DAY);
  assert.is((await me(service, bearer(account.token))).status, 200, 'day 29: nine days after a use that may not be written yet');
  assert.equal(await listed(service, account.token), [sid]);
  service.clock.advance(DAY + SECOND);
  await assertRefused(service, account.token);
  assert.equal(await listed(service, account.apiKey), []);
  const [row] = await service.deps.db.query<{ revoked: boolean }>('SELECT revoked_at IS NOT NULL AS revoked FROM sessions WHERE id = $1', [sid]);
  assert.is(row.revoked, false, 'ended by its JWT_TTL, not revoked');
});

test('a cached session whose use was written since it was cached is asked of the database, not refused', async ({ service }) => {
  const account = await registerAndVerify(service, 'idle.cache-written@example.com');
  service.clock.advance(14 * DAY - 10 * SECOND);
  assert.is((await me(service, bearer(account.token))).status, 200);
  if (onServer) await eventually('the session cached', async () => (await me(service, bearer(account.token))).status === 200 && cachedSession(service, account.token));
  await sessionTouchesOf(service.deps).flush();
  const [row] = await service.deps.db.query<{ last_used_at: Date }>('SELECT last_used_at FROM sessions WHERE id = $1', [sessionIdOf(account.token)]);
  assert.is(row.last_used_at.toISOString(), service.clock.now().toISOString(), 'the use is written');
  service.clock.advance(20 * SECOND);
  assert.is((await me(service, bearer(account.token))).status, 200, 'the cached entry holds the login as last use; the database knows better');
});

test('a JWT names PUBLIC_URL as its audience', async ({ service }) => {
  const account = await registerAndVerify(service, 'aud.fresh@example.com');
  const claims = decodeJwt(account.token);
  assert.is(claims.aud, service.env.PUBLIC_URL);
  assert.is(claims.iss, service.env.PUBLIC_URL);
});

/** A token signed with the service's own secret and key id, for a real session, with `aud` as given (none: left out). */
async function forge(service: TestService, token: string, aud?: string | string[]): Promise<string> {
  const secret = Buffer.from(service.env.JWT_SECRET);
  const now = Math.floor(service.clock.now().getTime() / 1000);
  const claims = decodeJwt(token);
  const jwt = new SignJWT({ sid: claims.sid })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: jwtKeyId(secret) })
    .setSubject(String(claims.sub))
    .setIssuer(service.env.PUBLIC_URL)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600);
  if (aud !== undefined) jwt.setAudience(aud);
  return jwt.sign(secret);
}

test('a token for another audience is 401, over REST, tRPC and the pages; one without `aud` (issued before) still works', async ({ service }) => {
  const account = await registerAndVerify(service, 'aud.forged@example.com');
  const elsewhere = await forge(service, account.token, 'https://elsewhere.example');
  await assertRefused(service, elsewhere);
  await assertRefused(service, await forge(service, account.token, ['https://elsewhere.example']));
  await assertRefused(service, await forge(service, account.token, `${service.env.PUBLIC_URL}/`));

  const older = await forge(service, account.token);
  assert.is(decodeJwt(older).aud, undefined);
  const answer = await me(service, bearer(older));
  assert.is(answer.status, 200, answer.text);
  assert.is(answer.body.user.id, account.user.id);
  assert.is((await trpcMe(service, older)).status, 200);
  assert.is((await me(service, bearer(await forge(service, account.token, service.env.PUBLIC_URL)))).status, 200, 'its own audience');
  assertError(await me(service, bearer(elsewhere)), 401, 'UNAUTHORIZED');
});

test('SESSION_IDLE_TIMEOUT=30s: a session just cached by /me is refused once idle, though the cache entry is still there', async (context) => {
  await restartedFor(context, { SESSION_IDLE_TIMEOUT: '30s' }, async (service) => {
    const account = await registerAndVerify(service, 'idle.cached@example.com');
    if (onServer) await eventually('the session cached', async () => (await me(service, bearer(account.token))).status === 200 && cachedSession(service, account.token));
    service.clock.advance(20 * SECOND);
    assert.is((await me(service, bearer(account.token))).status, 200, '20 s: alive, and used');
    service.clock.advance(30 * SECOND);
    if (onServer) assert.ok(cachedSession(service, account.token), 'the entry is younger than the cache TTL');
    await assertRefused(service, account.token);
    assert.equal(await listed(service, account.apiKey), []);
  });
});

test('SESSION_IDLE_TIMEOUT=0 turns it off: a session unused for 29 days works, JWT_TTL alone ends it', async (context) => {
  await restartedFor(context, { SESSION_IDLE_TIMEOUT: '0' }, async (service) => {
    const account = await registerAndVerify(service, 'idle.off@example.com');
    service.clock.advance(29 * DAY);
    assert.equal(await listed(service, account.apiKey), [sessionIdOf(account.token)]);
    assert.is((await me(service, bearer(account.token))).status, 200);
    service.clock.advance(DAY + SECOND);
    await assertRefused(service, account.token);
  });
});

test.run();
