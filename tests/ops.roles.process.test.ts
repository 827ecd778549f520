import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { spawnScript, spawnService, waitUntilReady, type ServiceProcess } from './helpers/process.ts';
import { freePort, request } from './helpers/service.ts';
import { startSmtpServer, type SmtpServer } from './helpers/smtp.ts';
import { eventually } from './helpers/wait.ts';
import { createAccount, paddleEvent, paddleHeaders, post, type TestAccount } from './helpers/webhook-fixtures.ts';

// The docker-compose topology as local processes: `npm run migrate`, then `npm run gateway`
// and `npm run worker` side by side on one PostgreSQL. On the embedded database (which
// serves one process) only the migrate step applies, and that is what is checked there.

const roles = suite('separate roles on one database');
const BILLING_SECRET = `pdl_ntfset_${randomBytes(12).toString('hex')}`;
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
  };
});

roles.after(async () => {
  for (const service of running) service.child.kill('SIGKILL');
  await smtp.close();
  await database.drop();
});

const migrate = () => spawnScript('server/src/roles/migrate.ts', [], env);

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
  const startWorker = () => {
    const worker = spawnService(env, 'worker');
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

  roles('a gateway process serves accounts while a worker process of its own applies webhooks', async () => {
    const base = await gateway();
    const account = await createAccount({ url: base, smtp });
    const worker = startWorker();

    const delivery = subscriptionDelivery(account, 'subscription.activated', 'active');
    assert.is((await post({ url: base }, '/billingprovider/webhook', delivery.payload, delivery.headers)).status, 200);
    await eventually('the worker process applied the plan', async () => (await plan(base, account)) === 'pro', 20_000);

    worker.child.kill('SIGTERM');
    assert.is(await worker.exited, 0, worker.output());
  });

  roles('with no worker running the gateway still acknowledges durably; a worker started later applies it', async () => {
    const base = await gateway();
    const account = await createAccount({ url: base, smtp }, 'later');
    const delivery = subscriptionDelivery(account, 'subscription.activated', 'active');
    assert.is((await post({ url: base }, '/billingprovider/webhook', delivery.payload, delivery.headers)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.is(await plan(base, account), 'free', 'nothing applies it while no worker runs');
    const worker = startWorker();
    await eventually('the new worker applied the kept delivery', async () => (await plan(base, account)) === 'pro', 30_000);
    worker.child.kill('SIGTERM');
    assert.is(await worker.exited, 0, worker.output());
  });
}

roles.run();
