import { existsSync, readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { exitWithin, spawnService, stopService, terminate, waitUntilReady } from './helpers/process.ts';
import { openSocket } from './helpers/raw-http.ts';
import { freePort, request } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

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
    assert.match(service.output(), /JWT_SECRET and DATA_KEY not set/);
    const secrets = readFileSync(secretsFile, 'utf8');
    const { jwtSecret, dataKey } = JSON.parse(secrets);
    assert.not.ok(service.output().includes(jwtSecret), 'the generated JWT secret is not logged');
    assert.not.ok(service.output().includes(dataKey), 'the generated data key is not logged');
  } finally {
    assert.is(await terminate(service), 0);
  }
});

lifecycle('SIGTERM lets an in-flight request finish, then exits 0', async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const metricsToken = 'lifecycle-metrics-token';
  const service = spawnService({ ...database.env, PORT: String(port), HOST: '127.0.0.1', RATE_LIMITS: 'off', METRICS_TOKEN: metricsToken });
  try {
    await waitUntilReady(`${base}/readyz`, service);
    // The body is held back until the service counts the request as in flight (besides the
    // scrape that asks): the signal then surely comes while it is being handled.
    const { hostname } = new URL(base);
    const socket = await openSocket(hostname, port);
    const body = JSON.stringify({ email: 'in-flight@example.com', password: 'a long enough password', name: 'In Flight' });
    socket.write(`POST /api/v1/auth/register HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
    await eventually(
      'the register request to be in flight',
      async () => {
        const scraped = await request(base, 'GET', '/metrics', { headers: { authorization: `Bearer ${metricsToken}` } });
        return Number(/^http_requests_in_flight (\S+)$/m.exec(scraped.text)?.[1]) === 2;
      },
    );
    const inFlight = answerOf(socket);
    service.child.kill('SIGTERM');
    await eventually('the service to start draining', () => /shutting down/.test(service.output()));
    socket.write(body);
    assert.match(await inFlight, /^HTTP\/1\.1 201 /, 'the request that was in flight got its answer');
    assert.is(await exitWithin(service), 0);
    assert.match(service.output(), /shutting down/);
    assert.match(service.output(), /"msg":"stopped"/);
  } finally {
    await stopService(service);
  }
});

lifecycle('a restart on the same DATA_DIR keeps accounts, sessions and the generated secrets', async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { ...database.env, PORT: String(port), HOST: '127.0.0.1', RATE_LIMITS: 'off' };
  const first = spawnService(env);
  try {
    await waitUntilReady(`${base}/readyz`, first);
    const registered = await request(base, 'POST', '/api/v1/auth/register', {
      json: { email: 'restarted@example.com', password: 'a long enough password', name: 'Restarted' },
    });
    assert.is(registered.status, 201);
  } finally {
    assert.is(await terminate(first), 0);
  }

  const second = spawnService(env);
  try {
    await waitUntilReady(`${base}/readyz`, second);
    const login = await request(base, 'POST', '/api/v1/auth/login', {
      json: { email: 'restarted@example.com', password: 'a long enough password' },
    });
    assert.is(login.status, 403, 'the account survived (unverified, password from the first start matched)');
    assert.is(login.body.code, 'EMAIL_NOT_VERIFIED');
  } finally {
    assert.is(await terminate(second), 0);
  }
});

lifecycle('production refuses to start without JWT_SECRET, DATA_KEY and PUBLIC_URL, naming them', async () => {
  const service = spawnService({ ...database.env, NODE_ENV: 'production', PORT: String(await freePort()) });
  try {
    assert.is(await exitWithin(service), 1);
    for (const name of ['JWT_SECRET', 'DATA_KEY', 'PUBLIC_URL']) assert.match(service.output(), name);
  } finally {
    await stopService(service);
  }
});

lifecycle('a bad variable stops the start with a message naming it', async () => {
  const service = spawnService({ ...database.env, PORT: 'eighty', JWT_TTL: 'forever' });
  try {
    assert.is(await exitWithin(service), 1);
    assert.match(service.output(), 'PORT');
    assert.match(service.output(), 'JWT_TTL');
  } finally {
    await stopService(service);
  }
});

lifecycle('the separate roles refuse the embedded database, which serves one process', async () => {
  const { DATABASE_URL: _, ...embeddedEnv } = database.env;
  const service = spawnService({ ...embeddedEnv, PORT: String(await freePort()) }, 'worker');
  try {
    assert.is(await exitWithin(service), 1);
    assert.match(service.output(), 'set DATABASE_URL');
  } finally {
    await stopService(service);
  }
});

/** Everything the server writes on `socket` until it closes it. */
function answerOf(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
}

lifecycle.run();
