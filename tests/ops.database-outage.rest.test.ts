import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { Sequelize } from 'sequelize';
import { isDatabaseUnavailable } from '../server/src/lib/db.ts';
import { AUTH, assertError, bearer, login, me, PASSWORD, registerAndVerify } from './helpers/auth.ts';
import { freePort, request, startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// While the database cannot be reached, callers get 503 SERVICE_UNAVAILABLE with a
// Retry-After (try again), never a 500 (our bug); once it is back, everything answers again.

let service: TestService;

test.before(async () => {
  service = await startTestApp();
});
test.after(async () => {
  await service?.close();
});

test('a query the database refuses is a fault, not an outage', async () => {
  const refused = await service.deps.db.query('SELECT * FROM no_such_table').then(() => undefined, (error: unknown) => error);
  assert.ok(refused instanceof Error);
  assert.is(isDatabaseUnavailable(refused), false);
  assert.is(isDatabaseUnavailable(new Error('something else')), false);
  assert.is(isDatabaseUnavailable(undefined), false);
});

test('a database nobody listens on is an outage, through Sequelize and through pg', async () => {
  const url = `postgres://postgres@127.0.0.1:${await freePort()}/none`;
  const sequelize = new Sequelize(url, { dialect: 'postgres', dialectModule: pg, logging: false });
  try {
    const viaSequelize = await sequelize.query('SELECT 1').then(() => undefined, (error: unknown) => error);
    assert.ok(viaSequelize, 'Sequelize could not connect');
    assert.is(isDatabaseUnavailable(viaSequelize), true);
  } finally {
    await sequelize.close();
  }
  const client = new pg.Client({ connectionString: url });
  const viaPg = await client.connect().then(() => undefined, (error: unknown) => error);
  assert.is(isDatabaseUnavailable(viaPg), true);
});

const dispatchFailures = () => service.logs.lines.filter((line) => line.includes('inbox dispatch failed')).length;
/** The dispatcher's failed tries so far, as /metrics counts them. */
const dispatchTries = async () => (await service.deps.metrics.registry.getSingleMetric('inbox_dispatch_failures_total')!.get()).values[0]?.value ?? 0;

if (process.env.DATABASE_URL) {
  test('REST, tRPC and readiness answer 503 while the database is away, the worker backs off, and all recover without a restart', async () => {
    const account = await registerAndVerify(service, 'outage@example.com');
    const databaseName = new URL(service.env.DATABASE_URL).pathname.slice(1);
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      // What a failover or restart looks like from here: connections dropped, new ones refused.
      await admin.query(`ALTER DATABASE ${databaseName} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [databaseName]);

      const byKey = await eventually('/me to notice the outage', async () => {
        const answer = await me(service, bearer(account.apiKey));
        return answer.status === 503 && answer;
      });
      assertError(byKey, 503, 'SERVICE_UNAVAILABLE');
      assert.is(byKey.headers.get('retry-after'), '5');

      const loginAnswer = await login(service, account.email, PASSWORD);
      assertError(loginAnswer, 503, 'SERVICE_UNAVAILABLE');
      assert.not.match(loginAnswer.text, new RegExp(`${databaseName}|ALLOW_CONNECTIONS|not currently accepting`));

      const viaTrpc = await request(service.url, 'GET', '/trpc/auth.me', { headers: bearer(account.apiKey) });
      assert.is(viaTrpc.status, 503);
      assert.is(viaTrpc.body.error.data.appCode, 'SERVICE_UNAVAILABLE');

      // A webhook cannot be stored (here: its site's secret cannot even be looked up): the
      // provider is told to come back, as it would be for any store that failed.
      const webhook = await request(service.url, 'POST', `/webhook/payment/site_${'a'.repeat(24)}`, {
        headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
        body: '{"id":"evt_outage"}',
      });
      assertError(webhook, 503, 'SERVICE_UNAVAILABLE');
      assert.is(webhook.headers.get('retry-after'), '5');

      assertError(await request(service.url, 'GET', '/readyz'), 503, 'SERVICE_UNAVAILABLE');
      assert.is((await request(service.url, 'GET', '/healthz')).status, 200, 'the process itself is fine');

      // The worker's inbox dispatcher (every 100 ms) backs off and says so once, not per try:
      // by its fourth failed try (0.1 + 0.2 + 0.4 + 0.8 s of backoff) it has still warned once.
      await eventually('the dispatcher to notice the outage', async () => dispatchFailures() > 0);
      await eventually('the dispatcher to fail four tries', async () => (await dispatchTries()) >= 4);
      assert.is(dispatchFailures(), 1, 'one warning for the whole streak');
    } finally {
      await admin.query(`ALTER DATABASE ${databaseName} ALLOW_CONNECTIONS true`);
      await admin.end();
    }

    await eventually('/me back after the outage', async () => (await me(service, bearer(account.apiKey))).status === 200);
    await eventually('the dispatcher back', async () => service.logs.text().includes('inbox dispatch works again'));
    assert.is((await login(service, account.email, PASSWORD)).status, 200);
    assert.is((await request(service.url, 'GET', '/readyz')).status, 200);
    assert.not.ok(/"msg":"unexpected error"/.test(service.logs.text()), 'an outage is not logged as our bug');
    assert.ok(service.logs.text().includes('database unavailable'), 'but it is logged');
    assert.is((await request(service.url, 'POST', `${AUTH}/logout`, { headers: bearer(account.token) })).status, 200);
  });
}

test.run();
