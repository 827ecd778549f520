import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runHousekeeping } from '../server/src/roles/housekeeping.ts';
import { assertError, bearer, issuePaths, nextMail, registerAndVerify } from './helpers/auth.ts';
import { answerOf, callerOf, loginCall as login, meCall as me } from './helpers/caller.ts';
import { startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// auth.rotateApiKey (docs/API.md, Account lifecycle), called in process: a new key at once, the
// old one for grace_seconds more, on every instance; afterwards nothing of the old key is kept.
// What HTTP adds (no-store, a request with no body, no credentials, tRPC's transport) is tested
// over REST in tests/auth.api-key.rest.test.ts.

const onServer = Boolean(process.env.DATABASE_URL);
const test = suite<{ service: TestService }>('auth.rotateApiKey: a new key, the old one for a grace window');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const HOUR = 3600_000;

/** Any input, as a client that ignores the types would send it. */
const rotate = (service: TestService, credential: string, input: unknown = {}) => answerOf(callerOf(service, { bearer: credential }).auth.rotateApiKey(input as never));

async function previousKeyColumns(service: TestService, accountId: number) {
  const [row] = await service.deps.db.query<{ api_key_previous_hash: Buffer | null; api_key_previous_until: Date | null }>(
    'SELECT api_key_previous_hash, api_key_previous_until FROM accounts WHERE id = $1',
    [accountId],
  );
  return row;
}

test('without a grace window the old key stops at once, even where it was cached; login and /me give the new one', async ({ service }) => {
  const account = await registerAndVerify(service, 'rotate.now@example.com');
  assert.is((await me(service, bearer(account.apiKey))).status, 200, 'the old key, now cached');
  assert.is((await me(service, bearer(account.token))).body.user.api_key, account.apiKey, 'the session, cached with the key it opened');
  const rotated = await rotate(service, account.token);
  assert.is(rotated.status, 200);
  assert.equal(Object.keys(rotated.body).sort(), ['api_key', 'success']);
  assert.match(rotated.body.api_key, /^[0-9a-f]{64}$/);
  assert.is.not(rotated.body.api_key, account.apiKey);

  assertError(await me(service, bearer(account.apiKey)), 401, 'UNAUTHORIZED');
  assert.is((await me(service, bearer(rotated.body.api_key))).body.user.api_key, rotated.body.api_key);
  assert.is((await me(service, bearer(account.token))).body.user.api_key, rotated.body.api_key);
  assert.is((await login(service, account.email, account.password)).body.user.api_key, rotated.body.api_key);
  assert.equal(await previousKeyColumns(service, account.user.id), { api_key_previous_hash: null, api_key_previous_until: null });
  const notice = await nextMail(service, account.email, 1);
  assert.match(notice.subject, /API key was replaced/);
  assert.match(notice.text, /stopped working at once/);
  assert.not.match(notice.text, rotated.body.api_key);
});

test('with a grace window both keys work until it ends; the old one is never told the new one, nor rotates; then only the new one', async ({ service }) => {
  const account = await registerAndVerify(service, 'rotate.grace@example.com');
  const rotated = await rotate(service, account.apiKey, { grace_seconds: 3600 });
  assert.is(rotated.status, 200);
  const newKey = rotated.body.api_key;

  // A rotation with grace may follow a leak: whoever holds the old key must not get the new one.
  const byOld = await me(service, bearer(account.apiKey));
  assert.is(byOld.status, 200);
  assert.is(byOld.body.user.api_key, account.apiKey, 'the old key is told only itself');
  assert.not.match(byOld.text, newKey);
  const takeover = await rotate(service, account.apiKey, { grace_seconds: 0 });
  assertError(takeover, 403, 'FORBIDDEN');
  assert.not.match(takeover.text, newKey);
  assert.is((await me(service, bearer(newKey))).body.user.api_key, newKey, 'the new key still works, and is the current one');
  const columns = await previousKeyColumns(service, account.user.id);
  assert.ok(columns.api_key_previous_hash instanceof Buffer && columns.api_key_previous_hash.length === 32);
  assert.is(columns.api_key_previous_until?.toISOString(), new Date(service.clock.now().getTime() + HOUR).toISOString());

  service.clock.advance(HOUR - 1000);
  assert.is((await me(service, bearer(account.apiKey))).status, 200, 'a second before the end');
  service.clock.advance(1000);
  assertError(await me(service, bearer(account.apiKey)), 401, 'UNAUTHORIZED');
  assert.is((await me(service, bearer(newKey))).status, 200);

  // Stopped at the end of the window; housekeeping then forgets its lookup hash too.
  // Other tests' grace windows may have ended on this clock as well: at least this one is forgotten.
  assert.ok((await runHousekeeping(service.deps)).previousKeys >= 1);
  assert.equal(await previousKeyColumns(service, account.user.id), { api_key_previous_hash: null, api_key_previous_until: null });
  const [sealed] = await service.deps.db.query<{ api_key_sealed: string }>('SELECT api_key_sealed FROM accounts WHERE id = $1', [account.user.id]);
  assert.is(service.deps.secretBox.open(sealed.api_key_sealed, { column: 'accounts.api_key_sealed', row: account.user.id }), newKey, 'the only ciphertext is the new key');
});

test('rotating again within a window keeps only the latest two keys', async ({ service }) => {
  const account = await registerAndVerify(service, 'rotate.twice@example.com');
  const second = (await rotate(service, account.apiKey, { grace_seconds: 600 })).body.api_key;
  const third = (await rotate(service, second, { grace_seconds: 600 })).body.api_key;
  assertError(await me(service, bearer(account.apiKey)), 401, 'UNAUTHORIZED');
  assert.is((await me(service, bearer(second))).body.user.api_key, second);
  assert.is((await me(service, bearer(third))).body.user.api_key, third);
});

test('grace_seconds is 0 to 86400 whole seconds; no input means 0', async ({ service }) => {
  const account = await registerAndVerify(service, 'rotate.bounds@example.com');
  for (const grace of [-1, 86_401, 1.5, '60', null, true]) {
    const result = await rotate(service, account.token, { grace_seconds: grace });
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(result), ['grace_seconds']);
  }
  assert.is((await rotate(service, account.token, { grace_seconds: 86_400 })).status, 200);
  assert.is((await rotate(service, account.token, undefined)).status, 200, 'no input');
  assert.equal(await previousKeyColumns(service, account.user.id), { api_key_previous_hash: null, api_key_previous_until: null });
});

if (onServer) {
  test('a second instance refuses the old key by its notice, and at the end of the window by its own clock', async ({ service }) => {
    const other = await startTestApp({}, { joining: service });
    try {
      const account = await registerAndVerify(service, 'rotate.instances@example.com');
      assert.is((await me(other, bearer(account.apiKey))).status, 200, 'cached on the other instance');
      const key2 = (await rotate(service, account.token)).body.api_key;
      await eventually('the old key refused on the other instance', async () => (await me(other, bearer(account.apiKey))).status === 401);
      assert.is((await me(other, bearer(key2))).status, 200);

      await rotate(service, key2, { grace_seconds: 60 });
      other.clock.set(service.clock.now());
      await eventually('the previous key accepted on the other instance', async () => (await me(other, bearer(key2))).status === 200);
      other.clock.advance(60_000);
      assertError(await me(other, bearer(key2)), 401, 'UNAUTHORIZED');
    } finally {
      await other.close();
    }
  });
}

test.run();
