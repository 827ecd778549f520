import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createEmbeddedDatabase, createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { buildService, exitWithin, listensOn, spawnBuilt, spawnScript, stopService, waitUntilReady, type ServiceProcess } from './helpers/process.ts';
import { freePort } from './helpers/service.ts';

// docs/OPERATIONS.md, Troubleshooting: a start that fails prints one line naming the cause and the variable
// to fix, no stack trace, and exits 1. Run on the built service, as the image runs it.

type Context = { build: { dir: string; remove(): void }; database: TestDatabase; dirs: string[] };
const test = suite<Context>('a failed start: one line naming the variable, exit 1');

test.before(async (context) => {
  context.build = await buildService();
  context.database = await createTestDatabase();
  context.dirs = [];
});

test.after(async ({ build, database, dirs }) => {
  build?.remove();
  await database?.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const SECRETS = { JWT_SECRET: randomBytes(32).toString('hex'), DATA_KEY: randomBytes(32).toString('hex') };

function tempDir(context: Context): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-start-'));
  context.dirs.push(dir);
  return dir;
}

/** Starts the built service with `env`, expecting it to stop at once; returns its one line. */
async function failedStart(context: Context, env: Record<string, string>): Promise<{ line: string; output: string }> {
  const service = spawnBuilt(join(context.build.dir, 'main.js'), ['--role=all'], { HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env });
  try {
    const code = await exitWithin(service);
    assert.is(code, 1, service.output());
    const lines = service.errors().split('\n').filter(Boolean);
    assert.is(lines.length, 1, `one line on stderr, got:\n${service.errors()}`);
    assert.match(lines[0], /^Gatehouse cannot start: /);
    assert.not.match(service.output(), /\n\s+at /, 'no stack trace');
    return { line: lines[0], output: service.output() };
  } finally {
    // One that started after all is still running.
    await stopService(service);
  }
}

test('a bad value names its variable', async (context) => {
  const { line } = await failedStart(context, { ...context.database.env, ...SECRETS, PORT: 'eighty' });
  assert.match(line, /invalid configuration: PORT: /);
});

test('npm start (the TypeScript entry point) with a bad value stops the same way', async (context) => {
  const service = spawnScript('gateway/src/main.ts', [], { DATA_DIR: tempDir(context), ...SECRETS, PORT: 'not-a-port' });
  try {
    assert.is(await exitWithin(service), 1, service.output());
    assert.match(service.errors(), /^Gatehouse cannot start: invalid configuration: PORT: /);
  } finally {
    await stopService(service);
  }
});

test('a database that cannot be reached names DATABASE_URL, without the password in it', async (context) => {
  const port = await freePort();
  const { line, output } = await failedStart(context, { DATA_DIR: tempDir(context), ...SECRETS, PORT: '0', DATABASE_URL: `postgres://gatehouse:hunter2secret@127.0.0.1:${port}/gatehouse` });
  assert.match(line, `cannot reach the database at DATABASE_URL (127.0.0.1:${port}/gatehouse)`);
  assert.match(line, /check DATABASE_URL/);
  assert.not.ok(output.includes('hunter2secret'), 'the password is never printed');
});

test('a port in use names PORT', async (context) => {
  const taken = await new Promise<Server>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => resolve(server));
  });
  const { port } = taken.address() as { port: number };
  try {
    const { line } = await failedStart(context, { ...context.database.env, ...SECRETS, PORT: String(port) });
    assert.match(line, `port ${port} is already in use`);
    assert.match(line, /set PORT/);
  } finally {
    taken.close();
  }
});

test('a HOST that is no name of this machine names HOST, not the database', async (context) => {
  const { line } = await failedStart(context, { ...context.database.env, ...SECRETS, PORT: '0', HOST: 'no-such-host.invalid' });
  assert.match(line, /^Gatehouse cannot start: HOST no-such-host\.invalid is not a name or address of this machine \((?:ENOTFOUND|EAI_AGAIN)\); set HOST/);
  assert.not.match(line, /DATABASE_URL/);
});

test('the harness takes a 200 on the port for the service only from the service: not from another server that holds the port', async (context) => {
  const stranger = await new Promise<HttpServer>((resolve) => {
    const server = createHttpServer((_req, res) => res.end('{"status":"ready"}')).listen(0, '127.0.0.1', () => resolve(server));
  });
  const { port } = stranger.address() as { port: number };
  let service: ServiceProcess | undefined;
  try {
    assert.is(listensOn(process.pid, port) ?? true, true, 'this process holds the stranger');
    service = spawnBuilt(join(context.build.dir, 'main.js'), ['--role=all'], { HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...context.database.env, ...SECRETS, PORT: String(port) });
    const waited = await waitUntilReady(`http://127.0.0.1:${port}/readyz`, service).then(
      () => 'ready',
      (error: Error) => error.message,
    );
    assert.match(waited, /^service not ready at /);
    assert.match(waited, `port ${port} is already in use`);
    assert.is(await exitWithin(service), 1);
  } finally {
    stranger.close();
    // Were the wait fooled, the service would be left starting, to take the port once it is free.
    await stopService(service);
  }
});

test('a DATA_DIR that cannot be written names DATA_DIR, with or without generated secrets', async (context) => {
  const file = join(tempDir(context), 'not-a-directory');
  writeFileSync(file, 'a file where a directory should be');
  const embedded = await failedStart(context, { DATA_DIR: join(file, 'data'), ...SECRETS, PORT: '0' });
  assert.match(embedded.line, /DATA_DIR .*not-a-directory\/data cannot be written \(ENOTDIR/);
  const generated = await failedStart(context, { DATA_DIR: join(file, 'data'), PORT: '0' });
  assert.match(generated.line, /invalid configuration: DATA_DIR: .* cannot hold the development secrets \(ENOTDIR\)/);
});

test('production refuses the embedded database and a missing SMTP_URL, naming both', async (context) => {
  const { line } = await failedStart(context, {
    NODE_ENV: 'production',
    DATA_DIR: tempDir(context),
    ...SECRETS,
    PUBLIC_URL: 'https://gatehouse.example',
    PORT: '0',
  });
  assert.match(line, /DATABASE_URL: required when NODE_ENV=production/);
  assert.match(line, /SMTP_URL: required when NODE_ENV=production/);
});

test('a DATA_KEY that opens nothing stored names DATA_KEY; the right one still starts; on either database', async (context) => {
  // The secrets are stored in the database: on the run's, and on an embedded one beside it
  // when the run's is PostgreSQL (this file is not in the embedded pass, tests/run.mjs).
  const databases = [context.database.env];
  if (process.env.DATABASE_URL) {
    const embedded = await createEmbeddedDatabase();
    context.dirs.push(embedded.env.DATA_DIR);
    databases.push(embedded.env);
  }
  for (const database of databases) {
    const port = await freePort();
    const env = { ...database, ...SECRETS, PORT: String(port) };
    const first = spawnBuilt(join(context.build.dir, 'main.js'), [], { HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env });
    await stopAfterReady(first, port);
    const { line } = await failedStart(context, { ...env, DATA_KEY: randomBytes(32).toString('hex') });
    assert.match(line, /^Gatehouse cannot start: DATA_KEY: none of the configured keys opens the secrets stored in this database/);
    const again = spawnBuilt(join(context.build.dir, 'main.js'), [], { HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env });
    await stopAfterReady(again, port);
  }
});

test('a second process on the same embedded DATA_DIR stops after a bounded wait for the first to exit, naming DATA_DIR; the first serves on', async (context) => {
  // A copy of a data directory that has been started before: creating the database files costs
  // seconds of CPU and is not the point (a first start on an empty DATA_DIR is ops.lifecycle's).
  const copied = await createEmbeddedDatabase();
  context.dirs.push(copied.env.DATA_DIR);
  const dataDir = copied.env.DATA_DIR;
  const port = await freePort();
  const env = { DATA_DIR: dataDir, ...SECRETS, HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  const first = spawnBuilt(join(context.build.dir, 'main.js'), [], { ...env, PORT: String(port) });
  try {
    await waitUntilReady(`http://127.0.0.1:${port}/readyz`, first);
    const { line } = await failedStart(context, { ...env, PORT: '0' });
    assert.match(line, `DATA_DIR ${dataDir} is in use by another Gatehouse process`);
    assert.is((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200, 'the first process is untouched');
    assert.is(statSync(dataDir).mode & 0o777, 0o700, 'DATA_DIR is kept private');
  } finally {
    first.child.kill('SIGTERM');
    try {
      assert.is(await exitWithin(first), 0);
    } finally {
      await stopService(first);
    }
  }
});

test('a process killed outright leaves its DATA_DIR lock behind; the next start takes it over at once', async (context) => {
  // A data directory that has been started before, as in the test above.
  const copied = await createEmbeddedDatabase();
  context.dirs.push(copied.env.DATA_DIR);
  const dataDir = copied.env.DATA_DIR;
  const port = await freePort();
  const env = { DATA_DIR: dataDir, ...SECRETS, HOST: '127.0.0.1', LOG_LEVEL: 'warn', PORT: String(port) };
  const killed = spawnBuilt(join(context.build.dir, 'main.js'), [], env);
  let next: ServiceProcess | undefined;
  try {
    await waitUntilReady(`http://127.0.0.1:${port}/readyz`, killed);
    killed.child.kill('SIGKILL');
    await killed.exited;
    assert.ok(statSync(join(dataDir, 'gatehouse.lock')).isDirectory(), 'the lock outlived its process');
    next = spawnBuilt(join(context.build.dir, 'main.js'), [], env);
    await waitUntilReady(`http://127.0.0.1:${port}/readyz`, next);
    // Without waiting for an owner still there, and saying why. The line comes whether the lock
    // was still fresh or went stale (unrenewed for 10 s) while this start was slow, as on a
    // loaded machine; a fresh lock taken over because its owner is gone, the path that does not
    // wait for staleness, is tested in ops.crash-restart.process.test.ts (its lock kept fresh).
    assert.match(next.output(), /DATA_DIR was locked by a process that is gone; taking the lock over/);
    assert.not.match(next.output(), /waiting up to/);
    await stopAfterReady(next, port);
  } finally {
    await stopService(killed);
    await stopService(next);
  }
});

async function stopAfterReady(service: ServiceProcess, port: number): Promise<void> {
  try {
    await waitUntilReady(`http://127.0.0.1:${port}/readyz`, service);
  } finally {
    service.child.kill('SIGTERM');
    try {
      assert.is(await exitWithin(service), 0, service.output());
    } finally {
      await stopService(service);
    }
  }
}

test.run();
