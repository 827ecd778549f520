import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bearer, registerAndVerify, type Account } from './helpers/auth.ts';
import { createEmbeddedDatabase, type TestDatabase } from './helpers/database.ts';
import { buildService, exitWithin, spawnBuilt, spawnService, stopService, waitUntilReady, type ServiceProcess } from './helpers/process.ts';
import { freePort, request, type TestService } from './helpers/service.ts';
import { startSmtpServer, type SmtpServer } from './helpers/smtp.ts';
import { eventually } from './helpers/wait.ts';

// `npm run admin` beside `npm start` on the embedded database (docs/OPERATIONS.md, Operator
// CLI). PGlite's files serve one process, and the service holds them: the service runs each
// command for the CLI, whole, on its own connection, over a unix socket only DATA_DIR's
// owner can open, and the CLI never answers "in use". Both are real processes here, as an
// operator runs them: the service as `npm start` runs it, the CLI as the image's binary.
// The CLI is given DATA_DIR and nothing else: the service's settings are the ones that count.

type CliRun = { code: number | null; stdout: string; stderr: string };
type Running = { service: ServiceProcess; env: Record<string, string>; base: string };
type Context = { database: TestDatabase; smtp: SmtpServer; running: Running; built: { dir: string; remove(): void } };

const test = suite<Context>('admin CLI beside a running service on the embedded database');

async function startOn(dataDir: string, smtp: SmtpServer, extra: Record<string, string> = {}): Promise<Running> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: base,
    SMTP_URL: smtp.url,
    JWT_SECRET: randomBytes(32).toString('hex'),
    DATA_KEY: randomBytes(32).toString('hex'),
    RATE_LIMITS: 'off',
    LOG_LEVEL: 'info',
    ...extra,
  };
  const service = spawnService(env, 'all', { detached: true });
  try {
    await waitUntilReady(`${base}/readyz`, service);
  } catch (error) {
    await stopService(service, { group: true });
    throw error;
  }
  return { service, env, base };
}

async function stop({ service }: Running): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGTERM');
  try {
    assert.is(await exitWithin(service), 0, service.output());
  } finally {
    await stopService(service, { group: true });
  }
}

test.before(async (context) => {
  context.built = await buildService();
  context.database = await createEmbeddedDatabase({ migrated: true });
  context.smtp = await startSmtpServer();
  context.running = await startOn(context.database.env.DATA_DIR, context.smtp);
});
test.after(async ({ running, smtp, database, built }) => {
  if (running) await stop(running);
  await smtp?.close();
  await database?.drop();
  built?.remove();
});

/**
 * The built CLI as a child process, with DATA_DIR as its only setting unless `env` says more;
 * `onStart` may read what it prints as it comes.
 */
function cli(dataDir: string | Record<string, string>, built: Context['built'], args: string[], onStart?: (run: ServiceProcess) => void): Promise<CliRun> {
  const run = spawnBuilt(join(built.dir, 'admin.js'), args, typeof dataDir === 'string' ? { DATA_DIR: dataDir } : dataDir);
  onStart?.(run);
    let stdout = '';
  run.child.stdout!.on('data', (chunk) => (stdout += chunk));
  return run.exited.then((code) => ({ code, stdout, stderr: run.errors() }));
}

async function cliJson(context: Context, ...args: string[]): Promise<any> {
  const run = await cli(context.database.env.DATA_DIR, context.built, [...args, '--json']);
  assert.is(run.code, 0, `${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  assert.not.match(run.stderr, 'in use');
  return JSON.parse(run.stdout);
}

/** The service's log lines for commands it ran for the CLI. */
const commandLines = (running: Running) =>
  running.service
    .output()
    .split('\n')
    .filter((line) => line.includes('admin command run for the CLI'))
    .map((line) => JSON.parse(line));

/** What registerAndVerify needs of a service: its URL and the mail server it sends to. */
const asService = (running: Running, smtp: SmtpServer) => ({ url: running.base, smtp }) as unknown as TestService;

const overview = (running: Running, account: Account) => request(running.base, 'GET', '/api/v1/admin/overview', { headers: bearer(account.token) });

test('promote, role set, accounts list and show, demote: on the running service, on its data, at once; the last admin is kept (exit 1)', async (context) => {
  const { running, smtp } = context;
  const first = await registerAndVerify(asService(running, smtp), 'beside.roles.first@example.com');
  const second = await registerAndVerify(asService(running, smtp), 'beside.roles.second@example.com');
  assert.is((await overview(running, first)).status, 403);

  const promoted = await cliJson(context, 'promote', first.email);
  assert.equal([promoted.account.id, promoted.account.role, promoted.changed], [first.user.id, 'admin', true]);
  assert.is((await overview(running, first)).status, 200, 'the service sees the change at once');

  const listed = await cliJson(context, 'accounts', 'list', '--q', 'BESIDE.ROLES.');
  assert.equal(listed.items.map((item: any) => [item.email, item.role]), [[second.email, 'user'], [first.email, 'admin']]);
  const shown = await cliJson(context, 'accounts', 'show', String(second.user.id));
  assert.equal([shown.account.email, shown.sessions.length, shown.activity[0].event], [second.email, 1, 'login.succeeded']);
  assert.is((await cliJson(context, 'accounts', 'show', second.email)).account.id, second.user.id);

  // Whatever other tests made admins, first is to be the only one now.
  const everyone = await cliJson(context, 'accounts', 'list', '--limit', '200');
  for (const other of everyone.items.filter((item: any) => item.role === 'admin' && item.id !== first.user.id)) await cliJson(context, 'demote', other.email);
  const kept = await cli(context.database.env.DATA_DIR, context.built, ['demote', first.email]);
  assert.equal([kept.code, kept.stdout], [1, '']);
  assert.match(kept.stderr, /^error: This is the last administrator: make another account an admin before making this one a user\.\n$/);
  assert.is((await overview(running, first)).status, 200);

  assert.is((await cliJson(context, 'role', 'set', second.email, 'admin')).account.role, 'admin');
  assert.is((await cliJson(context, 'demote', first.email)).account.role, 'user');
  assert.is((await overview(running, first)).status, 403);

  // Logged by the service, by the command's name only: no address.
  const lines = commandLines(running);
  assert.ok(['promote', 'accounts list', 'accounts show', 'demote', 'role set'].every((name) => lines.some((line) => line.command === name)), JSON.stringify(lines));
  assert.not.match(lines.map((line) => JSON.stringify(line)).join('\n'), 'example.com');
});

test('inbox stats, and audit export streamed through the service past a page; a reader that stops early leaves the service well', async (context) => {
  const { running, smtp } = context;
  const stats = await cliJson(context, 'inbox', 'stats');
  assert.equal(stats.providers.map((p: { provider: string }) => p.provider), ['billing', 'payment', 'operator', 'messengerone', 'messengertwo']);

  // More than a page (1000 events) in one account's log: admin reads, each recorded.
  const reader = await registerAndVerify(asService(running, smtp), 'beside.reader@example.com');
  await cliJson(context, 'promote', reader.email);
  const reads = 1100;
  for (let done = 0; done < reads; done += 10) {
    const answers = await Promise.all(Array.from({ length: 10 }, () => request(running.base, 'GET', '/api/v1/admin/inbox/stats', { headers: bearer(reader.token) })));
    assert.ok(answers.every((answer) => answer.status === 200));
  }
  const exported = await cli(context.database.env.DATA_DIR, context.built, ['audit', 'export', '--account', String(reader.user.id)]);
  assert.is(exported.code, 0, exported.stderr);
  const lines = exported.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
  assert.is(lines.filter((line) => line.event === 'admin.inbox_read').length, reads);
  assert.ok(lines.every((line, index) => index === 0 || BigInt(line.id) > BigInt(lines[index - 1].id)), 'oldest first');
  assert.ok(exported.stdout.endsWith('\n'));

  // `| head -1`: the reader goes after one line, and the service carries on.
  const early = await cli(context.database.env.DATA_DIR, context.built, ['audit', 'export'], (run) => {
    run.child.stdout!.once('data', () => run.child.stdout!.destroy());
  });
  assert.is(early.code, 0, early.stderr);
  assert.is((await request(running.base, 'GET', '/readyz')).status, 200);
  assert.is((await cliJson(context, 'inbox', 'stats')).success, true);
});

test('commands at once all run; usage errors, --help and unknown accounts answer as they always did', async (context) => {
  const dir = context.database.env.DATA_DIR;
  const runs = await Promise.all([
    cli(dir, context.built, ['inbox', 'stats', '--json']),
    cli(dir, context.built, ['accounts', 'list', '--json']),
    cli(dir, context.built, ['migrate', 'status', '--json']),
    cli(dir, context.built, ['events', 'endpoints', 'list', '--json']),
  ]);
  for (const run of runs) assert.is(run.code, 0, run.stderr);
  assert.is(JSON.parse(runs[2].stdout).pending, 0);

  const usage = await cli(dir, context.built, ['accounts', 'list', '--limit', '0']);
  assert.equal([usage.code, usage.stdout, usage.stderr], [2, '', 'error: invalid value: --limit: must be at least 1\n']);
  const help = await cli(dir, context.built, ['accounts', 'show', '--help']);
  assert.is(help.code, 0);
  assert.match(help.stdout, /Usage: admin accounts show \[options\] <account>/);
  const unknown = await cli(dir, context.built, ['promote', 'nobody.beside@example.com']);
  assert.equal([unknown.code, unknown.stderr], [3, 'error: No account has that e-mail address.\n']);
});

test('a DATA_DIR too long for a socket: the socket is in a private directory of the temporary one; after a kill the CLI runs on its own, and a new service replaces the stale socket', async (context) => {
  const database = await createEmbeddedDatabase({ migrated: true });
  const dataDir = join(database.env.DATA_DIR, 'a-directory-name-long-enough-to-push-the-socket-path-past-what-a-unix-socket-can-hold');
  // The service and the CLI find the socket's directory under the same temporary directory.
  const cliEnv = { DATA_DIR: dataDir, TMPDIR: tmpdir() };
  mkdirSync(dataDir, { mode: 0o700 });
  renameSync(join(database.env.DATA_DIR, 'pgdata'), join(dataDir, 'pgdata'));
  const socketDir = join(tmpdir(), `gatehouse-${createHash('sha256').update(dataDir).digest('hex').slice(0, 20)}`);
  let running: Running | undefined;
  try {
    running = await startOn(dataDir, context.smtp, { TMPDIR: tmpdir() });
    const socket = join(socketDir, 'admin.sock');
    assert.ok(lstatSync(socket).isSocket());
    assert.is(lstatSync(socket).mode & 0o777, 0o600);
    assert.is(statSync(socketDir).mode & 0o777, 0o700);
    assert.not.ok(existsSync(join(dataDir, 'admin.sock')));

    const byService = await cli(cliEnv, context.built, ['inbox', 'stats', '--json']);
    assert.is(byService.code, 0, byService.stderr);
    await eventually('the service to log the command it ran', () => commandLines(running!).length === 1);

    // Killed outright: the socket stays, refusing; the CLI takes DATA_DIR over and opens it
    // itself, with the service's settings, as an operator's shell would have them.
    process.kill(-running.service.child.pid!, 'SIGKILL');
    await running.service.exited;
    assert.ok(lstatSync(socket).isSocket(), 'a killed service leaves its socket');
    const { JWT_SECRET, DATA_KEY } = running.env;
    const alone = await cli({ ...cliEnv, JWT_SECRET, DATA_KEY }, context.built, ['inbox', 'stats', '--json']);
    assert.is(alone.code, 0, alone.stderr);
    assert.is(JSON.parse(alone.stdout).success, true);

    // Started again, the service takes the socket's place; stopped, it removes it.
    running = await startOn(dataDir, context.smtp, { JWT_SECRET, DATA_KEY, TMPDIR: tmpdir() });
    assert.is((await cli(cliEnv, context.built, ['migrate', 'status', '--json'])).code, 0);
    // The log line comes through the service's stdout, which may reach us after the CLI's answer.
    await eventually('the new service to log the command it ran', () => commandLines(running!).length === 1);
    await stop(running);
    assert.not.ok(existsSync(socket), 'a stopped service removes its socket');
  } finally {
    await stopService(running?.service, { group: true });
    rmSync(socketDir, { recursive: true, force: true });
    await database.drop();
  }
});

test.run();
