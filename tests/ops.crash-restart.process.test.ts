import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { describeStartFailure } from '../server/src/index.ts';
import { EmbeddedDatabaseUnreadable, OWNER_EXIT_WAIT_MS, startEmbeddedPostgres } from '../server/src/lib/embedded-postgres.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { createEmbeddedDatabase, type TestDatabase } from './helpers/database.ts';
import { exitWithin, spawnService, stopService, terminate, waitUntilReady, type ServiceProcess } from './helpers/process.ts';
import { freePort, request } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// A supervisor restarts a crashed service at once, while the kernel may still be tearing the
// old process down. On the embedded database (no DATABASE_URL), as the DATA_DIR lock is its;
// and what a crash can leave in the embedded database's own files (the last tests).

type Context = { databases: TestDatabase[]; others: ChildProcess[] };
const test = suite<Context>('a restart right after a crash: the embedded DATA_DIR lock waits, briefly, for its dead owner');

test.before((context) => {
  context.databases = [];
  context.others = [];
});
test.after(async ({ databases, others }) => {
  for (const other of others) other.kill('SIGKILL');
  for (const database of databases) await database.drop();
});

const WAITING = /DATA_DIR is locked by a process on this machine; waiting up to \d+ s for it to exit/;
const TAKEN_OVER = /DATA_DIR was locked by a process that is gone; taking the lock over/;

async function embeddedEnv(context: Context): Promise<Record<string, string>> {
  const database = await createEmbeddedDatabase();
  context.databases.push(database);
  const port = await freePort();
  return { ...database.env, PORT: String(port), HOST: '127.0.0.1', RATE_LIMITS: 'off', LOG_LEVEL: 'info' };
}

const readyz = (env: Record<string, string>) => `http://127.0.0.1:${env.PORT}/readyz`;

async function stop(service: ServiceProcess): Promise<void> {
  assert.is(await terminate(service), 0, service.output());
}

test('SIGKILLed after acknowledged writes and started again at once, the service becomes ready with every write there', async (context) => {
  const env = await embeddedEnv(context);
  const base = `http://127.0.0.1:${env.PORT}`;
  const first = spawnService(env, 'all', { detached: true });
  const accounts = Array.from({ length: 5 }, (_, i) => ({ email: `crash-${i}@example.com`, password: `acknowledged password ${i}`, name: `Crash ${i}` }));
  try {
    await waitUntilReady(readyz(env), first);
    for (const account of accounts) {
      assert.is((await request(base, 'POST', '/api/v1/auth/register', { json: account })).status, 201);
    }
  } finally {
    // The crash under test, or the cleaning up after a failure: the whole process group at once.
    await stopService(first, { group: true });
  }
  const second = spawnService(env);
  try {
    await waitUntilReady(readyz(env), second);
    for (const { email, password } of accounts) {
      const login = await request(base, 'POST', '/api/v1/auth/login', { json: { email, password } });
      assert.is(login.status, 403, `${email}: ${login.text}`);
      assert.is(login.body.code, 'EMAIL_NOT_VERIFIED', 'the account and its password were stored');
    }
    // Whether the old process was still visible (or its lock not yet stale, on a slow machine)
    // depends on timing; when the start had to wait, its log says so, then that it took over.
    const log = second.output();
    if (WAITING.test(log)) assert.ok(log.search(WAITING) < log.search(TAKEN_OVER), log);
  } finally {
    await stop(second);
  }
});

/** Holds DATA_DIR's lock as a Gatehouse process would, in the name of `pid` on `host`. */
async function holdLock(dataDir: string, pid: number, host: string): Promise<void> {
  await lockfile.lock(dataDir, {
    lockfilePath: join(dataDir, 'gatehouse.lock'),
    realpath: false,
    update: 2_000,
    // The service may take the lock over; that is what some tests expect.
    onCompromised: () => undefined,
  });
  writeFileSync(join(dataDir, 'gatehouse.lock.owner'), JSON.stringify({ pid, hostname: host }));
}

/** A process on this machine that stays until killed. */
function liveProcess(context: Context): ChildProcess {
  const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
  context.others.push(sleeper);
  return sleeper;
}

test('an owner on this machine that stays: refused with the DataDirInUse line, after the bounded wait', async (context) => {
  const env = await embeddedEnv(context);
  await holdLock(env.DATA_DIR, liveProcess(context).pid!, hostname());
  const started = Date.now();
  const refused = spawnService(env);
  try {
    assert.is(await exitWithin(refused), 1, refused.output());
    const elapsed = Date.now() - started;
    assert.match(refused.errors(), `DATA_DIR ${env.DATA_DIR} is in use by another Gatehouse process`);
    assert.match(refused.output(), WAITING);
    assert.ok(elapsed >= OWNER_EXIT_WAIT_MS && elapsed < OWNER_EXIT_WAIT_MS + 90_000, `refused after ${elapsed} ms`);
  } finally {
    await stopService(refused);
  }
});

test('an owner on this machine that exits during the wait: the start takes the lock over and becomes ready', async (context) => {
  const env = await embeddedEnv(context);
  const owner = liveProcess(context);
  await holdLock(env.DATA_DIR, owner.pid!, hostname());
  const service = spawnService(env);
  try {
    await eventually('the service to say it waits', () => WAITING.test(service.output()));
    owner.kill('SIGKILL');
    await waitUntilReady(readyz(env), service);
    assert.match(service.output(), TAKEN_OVER);
  } finally {
    await stop(service);
  }
});

/**
 * The pid of a process that has exited but that its parent never reaps: a zombie until the
 * parent goes. The child outlives the shell's `exec` by a second: a child that ended first
 * could be reaped by the shell itself, as a loaded machine showed.
 */
async function zombie(context: Context): Promise<number> {
  const parent = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
  context.others.push(parent);
  const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (chunk) => resolve(String(chunk)))));
  await eventually(`process ${pid} to be a zombie`, () => / Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')));
  return pid;
}

test('an owner that has died but is not yet reaped (a zombie, as a SIGKILLed service can be) is gone: taken over at once', async (context) => {
  const env = await embeddedEnv(context);
  await holdLock(env.DATA_DIR, await zombie(context), hostname());
  const service = spawnService(env);
  try {
    await waitUntilReady(readyz(env), service);
    assert.match(service.output(), TAKEN_OVER);
    assert.not.match(service.output(), WAITING, 'kill(pid, 0) answers for a zombie; its state says it is dead');
  } finally {
    await stop(service);
  }
});

test('an owner that died long ago: its lock gone stale is taken without waiting, and the log still says its owner is gone', async (context) => {
  const env = await embeddedEnv(context);
  // The lock and owner file a SIGKILLed process leaves, untouched for a minute: past the 10 s
  // that make an unrenewed lock stale, which the lock library takes over by itself.
  const ended = spawn('true');
  await new Promise((resolve) => ended.once('exit', resolve));
  const lockDir = join(env.DATA_DIR, 'gatehouse.lock');
  mkdirSync(lockDir);
  writeFileSync(join(env.DATA_DIR, 'gatehouse.lock.owner'), JSON.stringify({ pid: ended.pid, hostname: hostname() }));
  const minuteAgo = new Date(Date.now() - 60_000);
  utimesSync(lockDir, minuteAgo, minuteAgo);
  const service = spawnService(env);
  try {
    await waitUntilReady(readyz(env), service);
    assert.match(service.output(), TAKEN_OVER);
    assert.not.match(service.output(), WAITING);
  } finally {
    await stop(service);
  }
});

test('an owner on another host: refused at once, without waiting', async (context) => {
  const env = await embeddedEnv(context);
  await holdLock(env.DATA_DIR, process.pid, 'another-host.example');
  const refused = spawnService(env);
  try {
    assert.is(await exitWithin(refused), 1, refused.output());
    assert.match(refused.errors(), `DATA_DIR ${env.DATA_DIR} is in use by another Gatehouse process`);
    assert.not.match(refused.output(), WAITING);
  } finally {
    await stopService(refused);
  }
});

/** One statement on the embedded database at `url`, on a connection of its own (it serves one at a time). */
async function queryOnce(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

test("a postmaster.pid left empty (a start killed while PGlite wrote it): the next start opens the data all the same", async (context) => {
  const database = await createEmbeddedDatabase();
  context.databases.push(database);
  const logger = createLogger('silent');
  const first = await startEmbeddedPostgres(database.env.DATA_DIR, logger);
  try {
    await queryOnce(first.url, "CREATE TABLE kept (note text); INSERT INTO kept VALUES ('written before the kill')");
  } finally {
    await first.stop();
  }
  // What PGlite itself makes of such a file: no start at all (it says "failed to initialize properly").
  writeFileSync(join(database.env.DATA_DIR, 'pgdata', 'postmaster.pid'), '');
  const again = await startEmbeddedPostgres(database.env.DATA_DIR, logger);
  try {
    assert.equal((await queryOnce(again.url, 'SELECT note FROM kept')).rows, [{ note: 'written before the kill' }]);
  } finally {
    await again.stop();
  }
});

test('data PGlite cannot open: the start names the directory and what to do, and leaves DATA_DIR unlocked', async (context) => {
  const database = await createEmbeddedDatabase();
  context.databases.push(database);
  const dataDir = database.env.DATA_DIR;
  const versionFile = join(dataDir, 'pgdata', 'PG_VERSION');
  const version = readFileSync(versionFile, 'utf8');
  writeFileSync(versionFile, '9\n');
  const logger = createLogger('silent');
  const error = await startEmbeddedPostgres(dataDir, logger).then(
    (started) => started.stop().then(() => assert.unreachable('opened')),
    (reason: unknown) => reason,
  );
  assert.instance(error, EmbeddedDatabaseUnreadable);
  const line = describeStartFailure(error, { DATA_DIR: dataDir });
  assert.match(line, `the embedded database in ${join(dataDir, 'pgdata')} could not be opened (`);
  assert.match(line, `move ${join(dataDir, 'pgdata')} aside to start on an empty one`);
  assert.match(line, 'or set DATABASE_URL');
  // The refused start let go of DATA_DIR: with its files mended, the next start opens them.
  writeFileSync(versionFile, version);
  const again = await startEmbeddedPostgres(dataDir, logger);
  await again.stop();
});

test.run();
