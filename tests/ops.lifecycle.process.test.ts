import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { spawnService, waitUntilReady } from './helpers/process.ts';
import { freePort, request } from './helpers/service.ts';

const lifecycle = suite('service process lifecycle');
let database: TestDatabase;

lifecycle.before(async () => {
  database = await createTestDatabase();
});
lifecycle.after(async () => {
  await database.drop();
});

lifecycle('starts without secrets in development, generating them into DATA_DIR with a warning', async () => {
  const port = await freePort();
  const service = spawnService({ ...database.env, PORT: String(port), HOST: '127.0.0.1' });
  try {
    await waitUntilReady(`http://127.0.0.1:${port}/readyz`, service);
    const secretsFile = join(database.env.DATA_DIR, 'dev-secrets.json');
    assert.ok(existsSync(secretsFile), 'dev-secrets.json written');
    assert.match(service.output(), /JWT_SECRET or DATA_KEY not set/);
    const secrets = readFileSync(secretsFile, 'utf8');
    const { jwtSecret, dataKey } = JSON.parse(secrets);
    assert.not.ok(service.output().includes(jwtSecret), 'the generated JWT secret is not logged');
    assert.not.ok(service.output().includes(dataKey), 'the generated data key is not logged');
  } finally {
    service.child.kill('SIGTERM');
    assert.is(await service.exited, 0);
  }
});

lifecycle('SIGTERM lets an in-flight request finish, then exits 0', async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = spawnService({ ...database.env, PORT: String(port), HOST: '127.0.0.1', RATE_LIMITS: 'off' });
  await waitUntilReady(`${base}/readyz`, service);
  // Registration hashes a password with argon2: long enough to be in flight at the signal.
  const inFlight = request(base, 'POST', '/api/v1/auth/register', {
    json: { email: 'in-flight@example.com', password: 'a long enough password', name: 'In Flight' },
  });
  await new Promise((resolve) => setTimeout(resolve, 5));
  service.child.kill('SIGTERM');
  const answer = await inFlight;
  assert.is(answer.status, 201, 'the request that was in flight got its answer');
  assert.is(await service.exited, 0);
  assert.match(service.output(), /shutting down/);
  assert.match(service.output(), /"msg":"stopped"/);
});

lifecycle('a restart on the same DATA_DIR keeps accounts, sessions and the generated secrets', async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { ...database.env, PORT: String(port), HOST: '127.0.0.1', RATE_LIMITS: 'off' };
  const first = spawnService(env);
  await waitUntilReady(`${base}/readyz`, first);
  const registered = await request(base, 'POST', '/api/v1/auth/register', {
    json: { email: 'restarted@example.com', password: 'a long enough password', name: 'Restarted' },
  });
  assert.is(registered.status, 201);
  first.child.kill('SIGTERM');
  assert.is(await first.exited, 0);

  const second = spawnService(env);
  try {
    await waitUntilReady(`${base}/readyz`, second);
    const login = await request(base, 'POST', '/api/v1/auth/login', {
      json: { email: 'restarted@example.com', password: 'a long enough password' },
    });
    assert.is(login.status, 403, 'the account survived (unverified, password from the first start matched)');
    assert.is(login.body.code, 'EMAIL_NOT_VERIFIED');
  } finally {
    second.child.kill('SIGTERM');
    assert.is(await second.exited, 0);
  }
});

lifecycle('production refuses to start without JWT_SECRET, DATA_KEY and PUBLIC_URL, naming them', async () => {
  const service = spawnService({ ...database.env, NODE_ENV: 'production', PORT: String(await freePort()) });
  assert.is(await service.exited, 1);
  for (const name of ['JWT_SECRET', 'DATA_KEY', 'PUBLIC_URL']) assert.match(service.output(), name);
});

lifecycle('a bad variable stops the start with a message naming it', async () => {
  const service = spawnService({ ...database.env, PORT: 'eighty', JWT_TTL: 'forever' });
  assert.is(await service.exited, 1);
  assert.match(service.output(), 'PORT');
  assert.match(service.output(), 'JWT_TTL');
});

lifecycle('the separate roles refuse the embedded database, which serves one process', async () => {
  const { DATABASE_URL: _, ...embeddedEnv } = database.env;
  const service = spawnService({ ...embeddedEnv, PORT: String(await freePort()) }, 'worker');
  assert.is(await service.exited, 1);
  assert.match(service.output(), 'set DATABASE_URL');
});

lifecycle.run();
