import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertError, bearer } from './helpers/auth.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { EventReceiver } from './helpers/event-receiver.ts';
import { listeningPorts, spawnScript, spawnService, waitUntilReady, type ServiceProcess } from './helpers/process.ts';
import { metricTypes, scrape, valueOf } from './helpers/prometheus.ts';
import { freePort, request } from './helpers/service.ts';
import { startSmtpServer, type SmtpServer } from './helpers/smtp.ts';
import { eventually } from './helpers/wait.ts';
import { createAccount, paddleEvent, paddleHeaders, post, type TestAccount } from './helpers/webhook-fixtures.ts';

// The docker-compose topology as local processes: `npm run migrate`, then `npm run gateway`
// and `npm run worker` side by side on one PostgreSQL. On the embedded database (which
// serves one process) only the migrate step applies, and that is what is checked there,
// with a worker's start refused for a bad WORKER_METRICS_PORT before any database is opened.

const roles = suite('separate roles on one database');
const BILLING_SECRET = `pdl_ntfset_${randomBytes(12).toString('hex')}`;
const METRICS_TOKEN = `roles-metrics-${randomBytes(12).toString('hex')}`;
let database: TestDatabase;
let smtp: SmtpServer;
let env: Record<string, string>;
const running: ServiceProcess[] = [];

roles.before(async () => {
  database = await createTestDatabase();
  smtp = await startSmtpServer();
  env = {
    ...database.env,
    HOST: '127.0.0.1',
    SMTP_URL: smtp.url,
    JWT_SECRET: randomBytes(32).toString('hex'),
    DATA_KEY: randomBytes(32).toString('hex'),
    BILLING_WEBHOOK_SECRET: BILLING_SECRET,
    BILLING_PLANS: 'pri_roles_pro=pro',
    RATE_LIMITS: 'off',
    METRICS_TOKEN,
  };
});

roles.after(async () => {
  for (const service of running) service.child.kill('SIGKILL');
  await smtp.close();
  await database.drop();
});

roles('npm run migrate applies the migrations, and a second run has nothing to do', async () => {
  // A database of its own: a service started by another test would have migrated the suite's.
  const fresh = await createTestDatabase();
  try {
    const migrate = () => spawnScript('server/src/roles/migrate.ts', [], { ...env, ...fresh.env });
    const first = migrate();
    assert.is(await first.exited, 0, first.output());
    assert.match(first.output(), /database migrated/);
    const second = migrate();
    assert.is(await second.exited, 0, second.output());
    assert.match(second.output(), /database already up to date/);
  } finally {
    await fresh.drop();
  }
});

roles('a bad WORKER_METRICS_PORT refuses the start with one line naming it', async () => {
  const starts = ['nope', '0', '65536'].map(async (value) => {
    const worker = spawnService({ ...env, WORKER_METRICS_PORT: value }, 'worker');
    assert.is(await worker.exited, 1, `${value}: ${worker.output()}`);
    assert.is(worker.errors(), 'Gatehouse cannot start: invalid configuration: WORKER_METRICS_PORT: must be a whole number from 1 to 65535\n', value);
  });
  await Promise.all(starts);
});

if (process.env.DATABASE_URL) {
  /** A Paddle event for the account's subscription, signed now with the billing secret. */
  const subscriptionDelivery = (account: TestAccount, eventType: string, status: string) => {
    const event = paddleEvent({
      eventType,
      occurredAt: new Date(),
      data: { id: `sub_roles_${account.id}`, status, custom_data: { account_id: String(account.id) }, items: [{ price: { id: 'pri_roles_pro' } }] },
    });
    const payload = JSON.stringify(event);
    return { payload, headers: paddleHeaders(payload, BILLING_SECRET, Math.floor(Date.now() / 1000)) };
  };
  const plan = async (base: string, account: TestAccount) =>
    (await request(base, 'GET', '/api/v1/auth/me', { headers: { authorization: `Bearer ${account.token}` } })).body?.user?.plan;
  const startWorker = (extra: Record<string, string> = {}) => {
    const worker = spawnService({ ...env, ...extra }, 'worker');
    running.push(worker);
    return worker;
  };
  let gatewayStarted: Promise<string> | undefined;
  /** The gateway process, started by whichever test needs it first: its base URL. */
  const gateway = () =>
    (gatewayStarted ??= (async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const started = spawnService({ ...env, PORT: String(port), PUBLIC_URL: base }, 'gateway');
      running.push(started);
      await waitUntilReady(`${base}/readyz`, started);
      return base;
    })());

  /** The suite's database, as the test's own client: for what no API does (a broken delivery, a role). */
  const sql = async (text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  };

  roles('a worker process with WORKER_METRICS_PORT serves its own metrics behind METRICS_TOKEN, and its health, there', async () => {
    const base = await gateway();
    const port = await freePort();
    const workerUrl = `http://127.0.0.1:${port}`;
    // HEALTH_PORT naming the same port, as docker-compose.yml has it: one server for both.
    const worker = startWorker({ WORKER_METRICS_PORT: String(port), HEALTH_PORT: String(port) });
    const receiver = await EventReceiver.start();
    const inboxId = randomUUID();
    try {
      await waitUntilReady(`${workerUrl}/readyz`, worker);
      assert.equal(listeningPorts(worker.child.pid!), [port], 'one port, the one asked for');
      assert.equal((await request(workerUrl, 'GET', '/healthz')).body, { status: 'ok' });
      assert.equal((await request(workerUrl, 'GET', '/readyz')).body, { status: 'ready' });
      for (const headers of [{}, bearer('not-the-metrics-token'), { authorization: METRICS_TOKEN }]) {
        const refused = await request(workerUrl, 'GET', '/metrics', { headers });
        assertError(refused, 401, 'UNAUTHORIZED');
        assert.is(refused.headers.get('www-authenticate'), 'Bearer');
      }
      assertError(await request(workerUrl, 'GET', '/api/v1/auth/me', { headers: bearer(METRICS_TOKEN), notGateway: true }), 404, 'NOT_FOUND');
      const first = await scrape(workerUrl, METRICS_TOKEN);
      for (const name of ['event_deliveries_total', 'job_failures_total', 'inbox_dispatch_failures_total', 'inbox_deliveries', 'event_oldest_pending_seconds', 'event_endpoints', 'process_cpu_seconds_total']) {
        assert.ok(metricTypes(first).has(name), name);
      }

      // A delivery its provider cannot parse: the worker's job fails, and its port counts it.
      await sql(`INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at) VALUES ($1, 'billing', '', $2, $3, now())`, [inboxId, randomUUID(), Buffer.from('not json')]);
      // An event the worker sends: a ping to an endpoint an admin added through the gateway.
      const admin = await createAccount({ url: base, smtp }, 'roles-admin');
      await sql(`UPDATE accounts SET role = 'admin' WHERE id = $1`, [admin.id]);
      const created = await request(base, 'POST', '/api/v1/admin/event-endpoints', { json: { url: receiver.url }, headers: bearer(admin.token) });
      assert.is(created.status, 201, created.text);
      receiver.secrets = [created.body.secret];
      const pinged = await request(base, 'POST', `/api/v1/admin/event-endpoints/${created.body.endpoint.id}/test`, { headers: bearer(admin.token) });
      assert.is(pinged.status, 200, pinged.text);

      const counted = await eventually('the worker counted the failed job, the delivered ping and the endpoint', async () => {
        const text = await scrape(workerUrl, METRICS_TOKEN);
        const done =
          valueOf(text, 'job_failures_total', { queue: 'webhook-process' }) >= 1 &&
          valueOf(text, 'event_deliveries_total', { type: 'ping', outcome: 'delivered' }) === 1 &&
          // Read from the database at most every 5 s.
          valueOf(text, 'event_endpoints', { state: 'enabled' }) === 1;
        return done ? text : undefined;
      });
      assert.is(receiver.delivered().length, 1);
      // Counted where they happened: the gateway process never sees them.
      const gatewayText = await scrape(base, METRICS_TOKEN);
      assert.is(valueOf(gatewayText, 'event_deliveries_total'), 0);
      assert.is(valueOf(gatewayText, 'job_failures_total'), 0);
      assert.not.ok(counted.includes(METRICS_TOKEN));

      worker.child.kill('SIGTERM');
      assert.is(await worker.exited, 0, worker.output());
    } finally {
      // Failed half-way, it must not apply the next tests' deliveries.
      worker.child.kill('SIGKILL');
      await worker.exited;
      await sql('DELETE FROM webhook_inbox WHERE id = $1', [inboxId]);
      await receiver.close();
    }
  });

  roles('without WORKER_METRICS_PORT or HEALTH_PORT a worker process opens no port', async () => {
    const worker = startWorker();
    await eventually('the worker started', () => /"msg":"Gatehouse started"/.test(worker.output()));
    const ports = listeningPorts(worker.child.pid!);
    assert.ok(ports, 'this machine shows who listens where (/proc)');
    assert.equal(ports, []);
    worker.child.kill('SIGTERM');
    assert.is(await worker.exited, 0, worker.output());
  });

  roles('a WORKER_METRICS_PORT in use refuses the start with one line naming it', async () => {
    const holder = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      const worker = startWorker({ WORKER_METRICS_PORT: String(port) });
      assert.is(await worker.exited, 1, worker.output());
      assert.is(worker.errors(), `Gatehouse cannot start: port ${port} is already in use by another process; set WORKER_METRICS_PORT to a free one\n`);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  roles('a gateway process serves accounts while a worker process of its own applies webhooks', async () => {
    const base = await gateway();
    const account = await createAccount({ url: base, smtp });
    const worker = startWorker();

    const delivery = subscriptionDelivery(account, 'subscription.activated', 'active');
    assert.is((await post({ url: base }, '/billingprovider/webhook', delivery.payload, delivery.headers)).status, 200);
    await eventually('the worker process applied the plan', async () => (await plan(base, account)) === 'pro');

    worker.child.kill('SIGTERM');
    assert.is(await worker.exited, 0, worker.output());
  });

  roles('with no worker running the gateway still acknowledges durably; a worker started later applies it', async () => {
    const base = await gateway();
    const account = await createAccount({ url: base, smtp }, 'later');
    const delivery = subscriptionDelivery(account, 'subscription.activated', 'active');
    assert.is((await post({ url: base }, '/billingprovider/webhook', delivery.payload, delivery.headers)).status, 200);
    // Rather than a pause to see that nothing applies it: its inbox row is kept and still waits.
    const [row] = await sql(`SELECT state FROM webhook_inbox WHERE provider = 'billing' AND external_id = $1`, [JSON.parse(delivery.payload).event_id]);
    assert.is(row?.state, 'received', 'kept, waiting for a worker');
    assert.is(await plan(base, account), 'free', 'nothing applies it while no worker runs');
    const worker = startWorker();
    await eventually('the new worker applied the kept delivery', async () => (await plan(base, account)) === 'pro');
    worker.child.kill('SIGTERM');
    assert.is(await worker.exited, 0, worker.output());
  });
}

roles.run();
