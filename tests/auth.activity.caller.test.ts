import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runHousekeeping } from '../server/src/roles/housekeeping.ts';
import { PASSWORD, assertError, bearer, registerAndVerify, type Account } from './helpers/auth.ts';
import { answerOf, callerOf, callerWith, loginCall as login, meCall as me } from './helpers/caller.ts';
import { activityItems, type ActivityItem } from './helpers/accounts.ts';
import { startTestApp, type TestService } from './helpers/service.ts';

// docs/API.md, Account lifecycle (Activity): the rules of auth.listActivity and of what the other
// procedures record there, called in process. What HTTP adds (no credentials, each request's own
// address and user agent, the limits per client IP) is tested over REST in
// tests/auth.activity.rest.test.ts.

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

type Headers = { authorization?: string; cookie?: string };

/** The activity list, its shape checked (activityItems). */
async function itemsOf(service: TestService, headers: Headers): Promise<ActivityItem[]> {
  return activityItems(await answerOf(callerWith(service, headers).auth.listActivity()));
}

const eventsOf = async (service: TestService, headers: Headers) => (await itemsOf(service, headers)).map((item) => item.event);
const now = (service: TestService) => service.clock.now().toISOString();
const count = async (service: TestService, sql: string, params: unknown[] = []): Promise<number> =>
  (await service.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0].n;
/** As the holder of these headers' credential; any input, as a client that ignores the types would send it. */
const as = (service: TestService, headers: Headers) => callerWith(service, headers).auth;

/** A trigger that makes PostgreSQL refuse a statement, for one test; dropped again by `undo`. */
async function refuse(service: TestService, name: string, timing: string, table: string, when: string): Promise<() => Promise<void>> {
  const { db } = service.deps;
  await db.query(`CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
  await db.query(`CREATE TRIGGER ${name} ${timing} ON ${table} FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION ${name}()`);
  return async () => {
    await db.query(`DROP TRIGGER IF EXISTS ${name} ON ${table}`);
    await db.query(`DROP FUNCTION IF EXISTS ${name}()`);
  };
}

const test = suite<{ service: TestService }>('auth.listActivity: what each procedure records, for whom, and for how long (AUDIT_RETENTION_DAYS=30)');

test.before(async (context) => {
  context.service = await startTestApp({ AUDIT_RETENTION_DAYS: '30' });
});
test.after(async ({ service }) => {
  await service?.close();
});

test('a wrong current password on a signed-in check (change password, change e-mail, delete) is login.failed and changes nothing', async ({ service }) => {
  const account = await registerAndVerify(service, 'activity.wrong@example.com');
  const auth = bearer(account.token);
  const wrong = 'not my password';
  service.clock.advance(MINUTE);
  const at = now(service);
  assertError(await answerOf(as(service, auth).changePassword({ current_password: wrong, new_password: 'whatever it may be' })), 401, 'INVALID_CREDENTIALS');
  assertError(await answerOf(as(service, auth).changeEmail({ new_email: 'activity.elsewhere@example.com', password: wrong })), 401, 'INVALID_CREDENTIALS');
  assertError(await answerOf(as(service, auth).deleteAccount({ password: wrong })), 401, 'INVALID_CREDENTIALS');
  const items = await itemsOf(service, auth);
  assert.equal(items.slice(0, 3).map((item) => [item.event, item.at]), [['login.failed', at], ['login.failed', at], ['login.failed', at]]);
  assert.equal(items.slice(3).map((item) => item.event), ['login.succeeded', 'email.verified', 'account.registered']);
  assert.is(await count(service, `audit_events WHERE event = 'account.deleted' AND (data->>'account_id')::int = $1`, [account.user.id]), 0);
  assert.is(await count(service, 'accounts WHERE id = $1', [account.user.id]), 1);
  assert.is((await me(service, auth)).status, 200);
  assert.is((await login(service, account.email, PASSWORD)).status, 200);
});

test('the event shares the transaction of its change: when the deletion fails after account.deleted was written, that row is gone too', async ({ service }) => {
  const account = await registerAndVerify(service, 'activity.tx.delete@example.com');
  const id = Number(account.user.id);
  const undo = await refuse(service, 'test_refuse_account_delete', 'BEFORE DELETE', 'accounts', `OLD.id = ${id}`);
  try {
    assertError(await answerOf(as(service, bearer(account.token)).deleteAccount({ password: PASSWORD })), 500, 'INTERNAL_ERROR');
  } finally {
    await undo();
  }
  assert.is(await count(service, `audit_events WHERE event = 'account.deleted' AND (data->>'account_id')::int = $1`, [id]), 0);
  assert.is(await count(service, 'accounts WHERE id = $1', [id]), 1);
  assert.is((await me(service, bearer(account.token))).status, 200);
  assert.equal(await eventsOf(service, bearer(account.token)), ['login.succeeded', 'email.verified', 'account.registered']);
});

test('the event shares the transaction of its change: when the event cannot be written, the password change does not happen', async ({ service }) => {
  const account = await registerAndVerify(service, 'activity.tx.password@example.com');
  const id = Number(account.user.id);
  const other = (await login(service, account.email)).body.token;
  const undo = await refuse(service, 'test_refuse_password_event', 'BEFORE INSERT', 'audit_events', `NEW.event = 'password.changed' AND NEW.account_id = ${id}`);
  try {
    const result = await answerOf(as(service, bearer(account.token)).changePassword({ current_password: PASSWORD, new_password: 'the password that never was' }));
    assertError(result, 500, 'INTERNAL_ERROR');
  } finally {
    await undo();
  }
  assert.is((await login(service, account.email, 'the password that never was')).status, 401);
  assert.is((await login(service, account.email, PASSWORD)).status, 200);
  // Its other sessions were not revoked either.
  assert.is((await me(service, bearer(other))).status, 200);
  assert.not.ok((await eventsOf(service, bearer(account.token))).includes('password.changed'));
});

test("a failed login for an unknown address is kept with account_id NULL and appears in no account's activity, not even of one registered later with that address", async ({ service }) => {
  const bystander = await registerAndVerify(service, 'activity.bystander@example.com');
  const before = await itemsOf(service, bearer(bystander.token));
  const orphansBefore = await count(service, `audit_events WHERE event = 'login.failed' AND account_id IS NULL`);
  service.clock.advance(MINUTE);
  const at = service.clock.now();
  const unknown = 'activity.nobody.yet@example.com';
  const probe = callerOf(service, {}, { userAgent: 'prober/1.0' }).auth.login({ email: unknown, password: PASSWORD });
  assertError(await answerOf(probe), 401, 'INVALID_CREDENTIALS');
  assert.is(await count(service, `audit_events WHERE event = 'login.failed' AND account_id IS NULL`), orphansBefore + 1);
  const [row] = await service.deps.db.query<{ account_id: number | null; at: Date; ip: string; user_agent: string }>(
    `SELECT account_id, at, ip, user_agent FROM audit_events WHERE event = 'login.failed' ORDER BY id DESC LIMIT 1`,
  );
  assert.equal(row, { account_id: null, at, ip: '127.0.0.1', user_agent: 'prober/1.0' });
  assert.equal(await itemsOf(service, bearer(bystander.token)), before);

  service.clock.advance(MINUTE);
  const later = await registerAndVerify(service, unknown);
  assert.equal(await eventsOf(service, bearer(later.token)), ['login.succeeded', 'email.verified', 'account.registered']);
});

test("only the caller's own events are listed: another account's never appear", async ({ service }) => {
  const alice = await registerAndVerify(service, 'activity.alice@example.com');
  const bob = await registerAndVerify(service, 'activity.bob@example.com');
  service.clock.advance(MINUTE);
  for (let i = 0; i < 3; i++) assert.is((await login(service, alice.email, 'wrong password')).status, 401);
  assert.is((await answerOf(as(service, bearer(alice.token)).rotateApiKey({}))).status, 200);
  assert.is((await answerOf(as(service, bearer(alice.token)).logout())).status, 200);
  const bobs = await itemsOf(service, bearer(bob.token));
  assert.equal(bobs.map((item) => item.event), ['login.succeeded', 'email.verified', 'account.registered']);
  // What each sees is exactly its own rows.
  for (const [account, headers] of [[alice, bearer((await login(service, alice.email)).body.token)], [bob, bearer(bob.token)]] as Array<[Account, Headers]>) {
    const listed = await itemsOf(service, headers);
    const own = await service.deps.db.query<{ event: string; at: Date }>('SELECT event, at FROM audit_events WHERE account_id = $1 ORDER BY at DESC, id DESC', [account.user.id]);
    assert.equal(listed.map((item) => [item.event, item.at]), own.map((row) => [row.event, row.at.toISOString()]));
  }
  assert.equal(await eventsOf(service, bearer(bob.apiKey)), ['login.succeeded', 'email.verified', 'account.registered']);
});

test('more than 100 events: the newest 100 are listed, newest first', async ({ service }) => {
  const account = await registerAndVerify(service, 'activity.busy@example.com');
  const times: string[] = [];
  for (let i = 0; i < 120; i++) {
    service.clock.advance(1_000);
    times.push(now(service));
    assert.is((await login(service, account.email, `wrong password ${i}`)).status, 401);
  }
  const items = await itemsOf(service, bearer(account.apiKey));
  assert.is(items.length, 100);
  assert.ok(items.every((item) => item.event === 'login.failed'));
  assert.equal(items.map((item) => item.at), times.slice(20).reverse());
  assert.is(await count(service, 'audit_events WHERE account_id = $1', [account.user.id]), 123);

  service.clock.advance(1_000);
  const fresh = await login(service, account.email);
  assert.is(fresh.status, 200);
  const after = await itemsOf(service, bearer(fresh.body.token));
  assert.is(after.length, 100);
  assert.equal([after[0].event, after[0].at], ['login.succeeded', now(service)]);
  assert.equal(after.slice(1).map((item) => item.at), times.slice(21).reverse());
});

// Last in this suite: the clock moves a month on.
test('retention: runHousekeeping purges events older than AUDIT_RETENTION_DAYS (30) on the service clock, keeps newer ones, and reports how many went', async ({ service }) => {
  const account = await registerAndVerify(service, 'activity.retention@example.com');
  const key = bearer(account.apiKey);
  const start = service.clock.now().getTime();
  service.clock.advance(MINUTE);
  const oldFailure = now(service);
  assert.is((await login(service, account.email, 'wrong password')).status, 401);
  service.clock.advance(2 * MINUTE);
  const youngFailure = now(service);
  assert.is((await login(service, account.email, 'wrong password')).status, 401);
  service.clock.advance(20 * DAY);
  const recentLogin = now(service);
  assert.is((await login(service, account.email)).status, 200);

  // Now the first failure is 30 days and a minute old, the second 30 days less a minute.
  service.clock.set(new Date(start + 30 * DAY + 2 * MINUTE));
  const cutoff = new Date(service.clock.now().getTime() - 30 * DAY);
  assert.is(cutoff.toISOString(), new Date(start + 2 * MINUTE).toISOString());
  const due = await count(service, 'audit_events WHERE at < $1', [cutoff]);
  const kept = await count(service, 'audit_events WHERE at >= $1', [cutoff]);
  // The account's registration, verification, first login and first failure, and any other test's events before them.
  assert.ok(due >= 4, `events due: ${due}`);

  const report = await runHousekeeping(service.deps);
  assert.is(report.auditEvents, due);
  assert.is(await count(service, 'audit_events WHERE at < $1', [cutoff]), 0);
  assert.is(await count(service, 'audit_events'), kept);
  const items = await itemsOf(service, key);
  assert.equal(items.map((item) => [item.event, item.at]), [['login.succeeded', recentLogin], ['login.failed', youngFailure]]);
  assert.not.ok(items.some((item) => item.at === oldFailure));

  // A second run finds nothing more to purge.
  assert.is((await runHousekeeping(service.deps)).auditEvents, 0);
  assert.is((await itemsOf(service, key)).length, 2);
});

test.run();
