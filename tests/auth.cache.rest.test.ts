import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeJwt } from 'jose';
import pg from 'pg';
import { apiKeyCacheKey, authCacheOf, sessionCacheKey } from '../server/src/modules/sessions/sessions.cache.ts';
import { ACCOUNT_NOTICES_APPLICATION_NAME } from '../server/src/lib/account-notices.ts';
import { ACCOUNT_COLUMNS, type AccountRow } from '../server/src/modules/accounts/accounts.model.ts';
import { AUTH, assertError, bearer, login, me, registerAndVerify, type Account } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

/**
 * /me answers repeat callers from memory; these tests change accounts and sessions behind the
 * service's back (plain SQL on a connection of their own, another instance, a dead LISTEN) and
 * require every change to show by its notice alone: the cache's TTL runs on the service's
 * test clock, which moves only when a test moves it. (How fast is the bench's business, not
 * a deadline's here.) On the embedded database the cache is off.
 */
const onServer = Boolean(process.env.DATABASE_URL);
const test = suite<{ service: TestService; sql: pg.Client }>('REST auth cache: invalidated by NOTIFY, off when it cannot listen');

const cachedByKey = (service: TestService, account: Account) =>
  authCacheOf(service.deps).get(apiKeyCacheKey(account.apiKey));
const cachedBySession = (service: TestService, token: string) =>
  authCacheOf(service.deps).get(sessionCacheKey(String(decodeJwt(token).sid)));

/** Asks /me until its answer came from the database and is now cached (a notice may void a fill). */
async function primeKey(service: TestService, account: Account) {
  await eventually('the API key cached', async () => (await me(service, bearer(account.apiKey))).status === 200 && cachedByKey(service, account));
}
async function primeSession(service: TestService, token: string) {
  await eventually('the session cached', async () => (await me(service, bearer(token))).status === 200 && cachedBySession(service, token));
}

const planOf = async (service: TestService, account: Account) => (await me(service, bearer(account.apiKey))).body.user.plan;

/**
 * A write no trigger sees, so no instance hears of it: an old answer afterwards proves the
 * answer came from the cache. The triggers are off only inside this transaction.
 */
async function unnoticed(sql: pg.Client, text: string, values: unknown[]) {
  await sql.query('BEGIN');
  try {
    await sql.query('ALTER TABLE accounts DISABLE TRIGGER USER; ALTER TABLE sessions DISABLE TRIGGER USER');
    await sql.query(text, values);
    await sql.query('ALTER TABLE accounts ENABLE TRIGGER USER; ALTER TABLE sessions ENABLE TRIGGER USER');
    await sql.query('COMMIT');
  } catch (error) {
    await sql.query('ROLLBACK');
    throw error;
  }
}

async function logout(service: TestService, token: string) {
  const result = await request(service.url, 'POST', `${AUTH}/logout`, { headers: bearer(token) });
  assert.is(result.status, 200, result.text);
}

test.before(async (context) => {
  context.service = await startTestApp();
  if (!onServer) return;
  context.sql = new pg.Client({ connectionString: context.service.env.DATABASE_URL });
  await context.sql.connect();
  await eventually('the cache listening', () => authCacheOf(context.service.deps).enabled);
});
test.after(async ({ service, sql }) => {
  await sql?.end();
  await service?.close();
});

if (!onServer) {
  test('on the embedded database the cache stays off, and every answer comes from the database', async ({ service }) => {
    const account = await registerAndVerify(service, 'embedded@example.com');
    assert.is(authCacheOf(service.deps).enabled, false);
    assert.is((await me(service, bearer(account.apiKey))).status, 200);
    assert.is((await me(service, bearer(account.token))).status, 200);
    assert.is(cachedByKey(service, account), undefined);
    assert.is(cachedBySession(service, account.token), undefined);
    await service.deps.db.query("UPDATE accounts SET plan = 'pro' WHERE id = $1", [account.user.id]);
    assert.is(await planOf(service, account), 'pro');
    await logout(service, account.token);
    assertError(await me(service, bearer(account.token)), 401, 'UNAUTHORIZED');
  });
} else {
  test('after logout the JWT is refused at once, even before (or without) the notice', async ({ service, sql }) => {
    const account = await registerAndVerify(service, 'logout@example.com');
    await primeSession(service, account.token);
    await logout(service, account.token);
    assertError(await me(service, bearer(account.token)), 401, 'UNAUTHORIZED');

    // With the sessions trigger off no notice comes: only the local eviction can refuse it.
    const second = (await login(service, account.email)).body.token as string;
    await primeSession(service, second);
    await sql.query('ALTER TABLE sessions DISABLE TRIGGER sessions_auth_notify_update');
    try {
      await logout(service, second);
      assertError(await me(service, bearer(second)), 401, 'UNAUTHORIZED');
    } finally {
      await sql.query('ALTER TABLE sessions ENABLE TRIGGER sessions_auth_notify_update');
    }
  });

  test('an account changed by SQL on another connection shows in /me by its notice', async ({ service, sql }) => {
    const account = await registerAndVerify(service, 'plan@example.com');
    await primeKey(service, account);
    await unnoticed(sql, "UPDATE accounts SET plan = 'team' WHERE id = $1", [account.user.id]);
    assert.is(await planOf(service, account), 'free', 'the cached row answers while nothing is notified');
    await sql.query("UPDATE accounts SET plan = 'pro' WHERE id = $1", [account.user.id]);
    await eventually('the new plan in /me', async () => (await planOf(service, account)) === 'pro');
  });

  test('a session revoked, or an account deleted, by SQL is refused by its notice', async ({ service, sql }) => {
    const account = await registerAndVerify(service, 'revoked@example.com');
    await primeSession(service, account.token);
    await sql.query('UPDATE sessions SET revoked_at = now() WHERE id = $1', [decodeJwt(account.token).sid]);
    await eventually('the revoked session refused', async () => (await me(service, bearer(account.token))).status === 401);

    const doomed = await registerAndVerify(service, 'deleted@example.com');
    await primeKey(service, doomed);
    await primeSession(service, doomed.token);
    await sql.query('DELETE FROM accounts WHERE id = $1', [doomed.user.id]);
    await eventually('the deleted account refused by API key', async () => (await me(service, bearer(doomed.apiKey))).status === 401);
    assertError(await me(service, bearer(doomed.token)), 401, 'UNAUTHORIZED');
  });

  test('AUTH_CACHE=off: no listener, nothing kept, a change no one was told of shows at once', async ({ service, sql }) => {
    const uncached = await startTestApp({ AUTH_CACHE: 'off' }, { joining: service });
    try {
      const account = await registerAndVerify(uncached, 'uncached@example.com');
      assert.is((await me(uncached, bearer(account.apiKey))).status, 200);
      assert.is((await me(uncached, bearer(account.token))).status, 200);
      assert.is(authCacheOf(uncached.deps).enabled, false);
      assert.is(cachedByKey(uncached, account), undefined);
      await unnoticed(sql, "UPDATE accounts SET plan = 'team' WHERE id = $1", [account.user.id]);
      assert.is(await planOf(uncached, account), 'team');
      const { rows } = await sql.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [
        ACCOUNT_NOTICES_APPLICATION_NAME,
      ]);
      assert.is(rows[0].n, 1, "only the first instance's listener");
    } finally {
      await uncached.close();
    }
  });

  test('two instances on one database: logout on one refuses the JWT on the other by its notice', async ({ service }) => {
    const other = await startTestApp({}, { joining: service });
    try {
      await eventually('the second instance listening', () => authCacheOf(other.deps).enabled);
      const account = await registerAndVerify(service, 'two-instances@example.com');
      await primeSession(service, account.token);
      await primeSession(other, account.token);
      await logout(service, account.token);
      await eventually('the JWT refused on the other instance', async () => (await me(other, bearer(account.token))).status === 401);
    } finally {
      await other.close();
    }
  });

  test('when the LISTEN connection dies the cache turns off and empty, and back on once it listens again', async ({ service, sql }) => {
    const account = await registerAndVerify(service, 'outage@example.com');
    await primeKey(service, account);
    const { rowCount } = await sql.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
      [ACCOUNT_NOTICES_APPLICATION_NAME],
    );
    assert.is(rowCount, 1, 'one listener to terminate');
    await eventually('the cache off', () => !authCacheOf(service.deps).enabled);
    assert.is(cachedByKey(service, account), undefined);

    // Unheard while the connection is down, and still no stale answer.
    await unnoticed(sql, "UPDATE accounts SET plan = 'team' WHERE id = $1", [account.user.id]);
    assert.is(await planOf(service, account), 'team');

    await eventually('the cache on again', () => authCacheOf(service.deps).enabled);
    assert.ok(service.logs.text().includes('auth cache off'), 'the outage is logged');
    assert.is(await planOf(service, account), 'team');
    await primeKey(service, account);
    await sql.query("UPDATE accounts SET plan = 'pro' WHERE id = $1", [account.user.id]);
    await eventually('the new plan in /me after reconnecting', async () => (await planOf(service, account)) === 'pro');
  });

  test('a row read before a notice came in is not kept: it may predate the change', async ({ service, sql }) => {
    const account = await registerAndVerify(service, 'epoch@example.com');
    const cache = authCacheOf(service.deps);
    const key = apiKeyCacheKey(account.apiKey);
    const epochBefore = cache.epoch;
    const [stale] = await service.deps.db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE a.id = $1`, [account.user.id]);
    await sql.query("UPDATE accounts SET plan = 'pro' WHERE id = $1", [account.user.id]);
    await eventually('the notice heard', () => cache.epoch !== epochBefore);
    cache.set(key, { account: stale }, epochBefore);
    assert.is(cache.get(key), undefined);
    assert.is(await planOf(service, account), 'pro');
  });

  test('the TTL is only a safety net, on the service clock', async ({ service }) => {
    const account = await registerAndVerify(service, 'ttl@example.com');
    await primeKey(service, account);
    service.clock.advance(60_000);
    assert.is(cachedByKey(service, account), undefined);
  });

  test('a TRUNCATE, which fires no row trigger, empties every cache', async ({ service, sql }) => {
    const account = await registerAndVerify(service, 'truncate@example.com');
    await primeSession(service, account.token);
    // CASCADE: the second factor's step-ups refer to sessions.
    await sql.query('TRUNCATE sessions CASCADE');
    await eventually('the truncated session refused', async () => (await me(service, bearer(account.token))).status === 401);
  });
}

test.run();
