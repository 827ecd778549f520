import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, constants, cpSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { buildService, exitWithin, spawnBuilt, spawnScript, stopService, terminate, waitUntilReady, type ServiceProcess } from './helpers/process.ts';
import { freePort } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';
import { paddleEvent, paddleHeaders } from './helpers/webhook-fixtures.ts';

// The image runs `node dist/main.js` as its main process (Dockerfile): these tests run
// `npm run build`'s output exactly so, send it SIGTERM the way a container runtime does, and
// check the drain (docs/OPERATIONS.md, Stopping): in-flight requests finish, new ones are refused,
// and the process is gone within SHUTDOWN_TIMEOUT, whatever is still hanging.

type Context = { build: { dir: string; remove(): void }; database: TestDatabase };
const test = suite<Context>('the built service, as the image runs it');

const root = fileURLToPath(new URL('..', import.meta.url));
const BILLING_SECRET = `pdl_ntfset_${randomBytes(12).toString('hex')}`;
const SHUTDOWN_SECONDS = 4;

test.before(async (context) => {
  context.build = await buildService();
  context.database = await createTestDatabase();
});

test.after(async ({ build, database }) => {
  build?.remove();
  await database?.drop();
});

const built = (context: Context, file: string) => join(context.build.dir, file);

function env(context: Context, port: number): Record<string, string> {
  return {
    ...context.database.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    JWT_SECRET: 'j'.repeat(40),
    DATA_KEY: 'd'.repeat(64),
    BILLING_WEBHOOK_SECRET: BILLING_SECRET,
    SHUTDOWN_TIMEOUT: `${SHUTDOWN_SECONDS}s`,
    RATE_LIMITS: 'off',
    LOG_LEVEL: 'info',
  };
}

async function startBuilt(context: Context): Promise<{ service: ServiceProcess; base: string; port: number }> {
  const port = await freePort();
  const service = spawnBuilt(built(context, 'main.js'), ['--role=all'], env(context, port));
  const base = `http://127.0.0.1:${port}`;
  await waitUntilReady(`${base}/readyz`, service);
  return { service, base, port };
}

/** A signed billing delivery whose body is sent in two parts: the request is in flight in between. */
function halfSentDelivery(port: number) {
  const payload = JSON.stringify(paddleEvent({ eventType: 'transaction.created', occurredAt: new Date(), data: { id: `txn_${randomBytes(6).toString('hex')}` } }));
  const headers = paddleHeaders(payload, BILLING_SECRET, Math.floor(Date.now() / 1000));
  const socket: Socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  const half = Math.floor(payload.length / 2);
  const head =
    `POST /billingprovider/webhook HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: ${headers['content-type']}\r\n` +
    `Paddle-Signature: ${headers['paddle-signature']}\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n`;
  const started = new Promise<void>((resolve) => socket.once('connect', () => socket.write(head + payload.slice(0, half), () => resolve())));
  return {
    started,
    finish: () => socket.write(payload.slice(half)),
    answer: () => answer,
    closed,
    destroy: () => socket.destroy(),
  };
}

const exitedWithin = async (service: ServiceProcess, ms: number) =>
  Promise.race([service.exited.then((code) => ({ code })), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms))]);

test('SIGTERM: the request in flight finishes, new connections are refused, and the process exits 0', async (context) => {
  const { service, base, port } = await startBuilt(context);
  try {
    const delivery = halfSentDelivery(port);
    await delivery.started;
    const signalled = Date.now();
    service.child.kill('SIGTERM');
    await eventually('new connections refused', () => fetch(`${base}/healthz`).then(() => false, () => true));
    assert.is(delivery.answer(), '', 'nothing answered before the request was complete');
    delivery.finish();
    await delivery.closed;
    assert.match(delivery.answer(), /^HTTP\/1\.1 200 OK/);
    assert.match(delivery.answer(), /Connection: close/i, 'told not to reuse the connection');
    const exit = await exitedWithin(service, SHUTDOWN_SECONDS * 1000);
    assert.equal(exit, { code: 0 }, service.output());
    assert.ok(Date.now() - signalled < SHUTDOWN_SECONDS * 1000);
    assert.match(service.output(), /"msg":"stopped"/);
  } finally {
    await stopService(service);
  }
});

test('SIGTERM with a request that never completes: the process still exits, at SHUTDOWN_TIMEOUT, saying so', async (context) => {
  const { service, port } = await startBuilt(context);
  try {
    const delivery = halfSentDelivery(port);
    await delivery.started;
    service.child.kill('SIGTERM');
    // A second of slack above the timeout, for a loaded machine; the drain waits that long, not less.
    const exit = await exitedWithin(service, (SHUTDOWN_SECONDS + 1) * 1000);
    delivery.destroy();
    assert.equal(exit, { code: 1 }, service.output());
    assert.match(service.output(), /shutdown took longer than SHUTDOWN_TIMEOUT/);
  } finally {
    await stopService(service);
  }
});

/** The COPY lines of the Dockerfile's build stage up to its build: [what, where]. */
function buildStageCopies(): Array<[string, string]> {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const stage = dockerfile.slice(dockerfile.indexOf(' AS build'), dockerfile.indexOf('RUN node build.mjs'));
  return [...stage.matchAll(/^COPY (.+) (\S+)$/gm)].flatMap(([, sources, target]) =>
    sources.split(' ').map((source): [string, string] => [source, target.endsWith('/') ? join(target, basename(source)) : target]),
  );
}

test("the image's build stage holds every file the build reads: only what the Dockerfile copies builds", () => {
  const stage = join(root, '.build', `image-stage-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    const copies = buildStageCopies();
    assert.ok(copies.some(([source]) => source === 'build.mjs'), `the build stage copies build.mjs: ${JSON.stringify(copies)}`);
    for (const [source, target] of copies) {
      if (source.startsWith('package')) continue; // npm ci's; node_modules resolves from the repository
      cpSync(join(root, source), join(stage, target), { recursive: true });
    }
    // Inside the repository, so that the packages resolve from its node_modules as `npm ci` put them in the image.
    const built = spawnSync(process.execPath, ['build.mjs', '--outdir=dist'], { cwd: stage, encoding: 'utf8' });
    assert.is(built.status, 0, `node build.mjs in the build stage:\n${built.stdout}${built.stderr}`);
    assert.ok(existsSync(join(stage, 'dist', 'main.js')));
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
});

/** Requests whose answers pass through tRPC's middleware chain and error shaping: success aside, each kind of refusal. */
const THROUGH_TRPC: Array<{ path: string; init?: RequestInit }> = [
  { path: '/api/v1/auth/me' },
  { path: '/api/v1/auth/me', init: { headers: { authorization: 'Bearer not-a-credential' } } },
  { path: '/api/v1/auth/register', init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'x@example.com', password: 'short', extra: 1 }) } },
  { path: '/api/v1/auth/login', init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong password here' }) } },
  { path: `/trpc/auth.me,auth.activity?batch=1&input=${encodeURIComponent('{}')}` },
];

test("the built service answers as the sources do, through tRPC's chain and its swapped spread helper", async (context) => {
  const answers = async (base: string) => {
    const got = [];
    for (const { path, init } of THROUGH_TRPC) {
      const response = await fetch(`${base}${path}`, init);
      got.push({ path, status: response.status, type: response.headers.get('content-type'), body: await response.json() });
    }
    return got;
  };
  // One after the other: the embedded database serves one process at a time.
  const built = await startBuilt(context);
  let fromBuild;
  try {
    fromBuild = await answers(built.base);
  } finally {
    await terminate(built.service);
  }
  assert.equal(fromBuild.slice(0, 4).map((answer) => answer.status), [401, 401, 400, 401]);
  assert.ok(Array.isArray(fromBuild[4].body) && fromBuild[4].body.length === 2 && fromBuild[4].body.every((call: { error?: unknown }) => call.error), 'a batch of two refused calls');
  const port = await freePort();
  const sources = spawnScript('gateway/src/main.ts', ['--role=all'], env(context, port));
  try {
    await waitUntilReady(`http://127.0.0.1:${port}/readyz`, sources);
    assert.equal(fromBuild, await answers(`http://127.0.0.1:${port}`));
  } finally {
    await terminate(sources);
  }
});

test('the built migration runner and CLI work on the same database', async (context) => {
  const run = (file: string, args: string[]) =>
    spawnSync(process.execPath, [built(context, file), ...args], { env: { PATH: process.env.PATH ?? '', ...env(context, 0), LOG_LEVEL: 'warn' }, encoding: 'utf8' });
  const migrated = run('migrate.js', []);
  assert.is(migrated.status, 0, migrated.stderr);
  const status = run('admin.js', ['migrate', 'status', '--json']);
  assert.is(status.status, 0, status.stderr);
  assert.is(JSON.parse(status.stdout).pending, 0);
  const reencrypted = run('admin.js', ['secrets', 'reencrypt', '--json']);
  assert.is(reencrypted.status, 0, reencrypted.stderr);
  assert.equal(JSON.parse(reencrypted.stdout), { success: true, reencrypted: 0, unreadable: 0 });
});

test('a worker-only process answers /healthz and /readyz on HEALTH_PORT (the compose health check); on the embedded database it refuses to run alone', async (context) => {
  const port = await freePort();
  const worker = spawnBuilt(built(context, 'main.js'), ['--role=worker'], { ...env(context, 0), HEALTH_PORT: String(port) });
  try {
    if (!context.database.env.DATABASE_URL) {
      assert.is(await exitWithin(worker), 1);
      assert.match(worker.errors(), /Gatehouse cannot start: the embedded database serves one process; set DATABASE_URL/);
      return;
    }
    await waitUntilReady(`http://127.0.0.1:${port}/readyz`, worker);
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/healthz`)).json(), { status: 'ok' });
    assert.is((await fetch(`http://127.0.0.1:${port}/api/v1/auth/me`)).status, 404, 'health only: no API on a worker');
  } finally {
    if (context.database.env.DATABASE_URL) assert.is(await terminate(worker), 0, worker.output());
    await stopService(worker);
  }
});

/** Whether a TCP connection to `host`:`port` is taken, or refused (or not answered within 3 s). */
function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 3_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** This machine's addresses other than loopback (and link-local, which needs an interface named). */
const outsideAddresses = () =>
  Object.values(networkInterfaces())
    .flat()
    .filter((address) => address && !address.internal && !address.address.startsWith('fe80:'))
    .map((address) => address!.address);

test('outside production HOST defaults to loopback: no other address of the machine reaches the service', async (context) => {
  const port = await freePort();
  // No HOST (nor NODE_ENV): what a developer's `npm start` does.
  const { HOST: _, ...withoutHost } = env(context, port);
  const service = spawnBuilt(built(context, 'main.js'), ['--role=all'], withoutHost);
  const control = createServer((socket) => socket.destroy());
  try {
    await waitUntilReady(`http://127.0.0.1:${port}/readyz`, service);
    const listening = service.output().split('\n').find((line) => line.includes('"msg":"gateway listening"'));
    assert.ok(listening, service.output());
    assert.is(JSON.parse(listening).address, '127.0.0.1', 'the address the socket is bound to');
    // Every other address of the machine: one a server on every interface answers on, and this service does not.
    await new Promise<void>((resolve) => control.listen(0, resolve));
    const controlPort = (control.address() as { port: number }).port;
    for (const address of outsideAddresses()) {
      assert.ok(await connects(address, controlPort), `${address} reaches a server listening on every interface`);
      assert.not.ok(await connects(address, port), `${address}:${port} reaches the service`);
    }
  } finally {
    control.close();
    assert.is(await terminate(service), 0, service.output());
  }
});

test('a reader of stdout that stops reading holds up no request: log lines wait off the event loop', async (context) => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // A FIFO nobody reads: once its 64 KiB are full, a write to it blocks. Opened for reading
  // and writing so that opening it does not wait for a reader.
  const fifo = join(context.database.env.DATA_DIR, 'stdout.fifo');
  execFileSync('mkfifo', [fifo]);
  const stdout = openSync(fifo, constants.O_RDWR);
  const service = spawnBuilt(built(context, 'main.js'), ['--role=all'], env(context, port), { stdout });
  try {
    await waitUntilReady(`${base}/readyz`, service);
    // Each answer logs a line of about 200 bytes: 1 MB in all, sixteen times what the FIFO holds.
    let sent = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (sent < 5_000) {
          sent++;
          const response = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(10_000) });
          assert.is(response.status, 200);
          await response.arrayBuffer();
        }
      }),
    );
  } finally {
    await stopService(service);
    closeSync(stdout);
  }
});

test.run();
