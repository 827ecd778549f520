import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSecretBox } from '../server/src/lib/crypto.ts';
import { EMBEDDED_START_PARAMS } from '../server/src/lib/embedded-postgres.ts';
import { MIGRATIONS } from '../server/src/migrations/index.ts';
import { EVENT_TYPES, previousSecretPlace, secretPlace } from '../server/src/modules/events/index.ts';
import { PROVIDER_NAMES } from '../server/src/webhooks/provider.ts';
import { runAdminCommand } from '../server/src/cli/program.ts';
import { Webhook } from 'standardwebhooks';
import { nextMail } from './helpers/auth.ts';
import { EventReceiver } from './helpers/event-receiver.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { buildService, spawnBuilt, spawnScript } from './helpers/process.ts';
import { request, startTestService, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';
import { createAccount, paddleEvent } from './helpers/webhook-fixtures.ts';

// `npm run admin -- …` as an operator runs it, on a database of its own, judged by its exit
// code, its stdout and its stderr. The first suite needs no running service, so it runs on
// the embedded database too: rows are written and read with SQL while no CLI runs (the
// embedded files serve one opener at a time). The second, on PostgreSQL only, runs the CLI
// beside a live service: a promoted account uses the admin API, and a replayed delivery is
// applied by the service's worker.
//
// Most tests are about what a command does: its output, its exit code, its effect on the
// database. They run it in this process (cliInProcess: runAdminCommand, what the binary
// runs, with strings for stdout and stderr), as a process start costs a second or more, and
// on the embedded database the boot of its files again. These tests run real processes,
// because the process itself is their point:
// - the npm run admin path (tsx, from the sources) against the built CLI: both start and
//   answer `--help` the same, exit 0;
// - bad values exit 2 before the database is touched: three of them as processes too, on an
//   unreachable DATABASE_URL, which never load the service;
// - promote and demote of an unknown address exit 3, as a process exits;
// - a database that cannot be reached exits 1 with one line on stderr and no stack: one
//   command as a process too, what an operator's terminal shows;
// - --json keeps stdout to one JSON document: the service's log lines go to file descriptor
//   2, which only a process tells apart from stdout.

type CliRun = { code: number | null; stdout: string; stderr: string };

/**
 * The CLI as the image runs it (`node dist/admin.js`), built once for the file. One test
 * below runs the `npm run admin` path (tsx) too, and compares.
 */
let built: { dir: string; remove(): void } | undefined;
// Both suites use it; it goes when the file is done.
process.on('exit', () => built?.remove());

/**
 * CLI processes under way at once, at most. A test starts its cases together and waits for
 * them all; dozens of processes starting at one time on two cores would slow every other file
 * of the run for no gain, so they queue here and take turns.
 */
const CLI_RUNS_AT_ONCE = 3;
let cliRunning = 0;
const cliWaiting: Array<() => void> = [];

/** The built CLI as a child process, with only `env` for environment. */
async function cliProcess(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  if (cliRunning >= CLI_RUNS_AT_ONCE) await new Promise<void>((resolve) => cliWaiting.push(resolve));
  cliRunning++;
  try {
    return await collect(spawnBuilt(join(built!.dir, 'admin.js'), args, env));
  } finally {
    cliRunning--;
    cliWaiting.shift()?.();
  }
}

/** The CLI's entry point as `npm run admin` runs it (tsx), with only `env` for environment. */
function cliFromSources(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return collect(spawnScript('server/src/cli/admin.ts', args, env));
}

function collect(run: ReturnType<typeof spawnScript>): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  run.child.stdout!.on('data', (chunk) => (stdout += chunk));
  run.child.stderr!.on('data', (chunk) => (stderr += chunk));
  // 'close', not 'exit': only then has everything the process wrote been read.
  return new Promise((resolve) => run.child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/**
 * Runs on the embedded files of one DATA_DIR, one after another: two openings at once in one
 * process would both get its lock (it is the same pid) and corrupt the files. PostgreSQL
 * takes them all at once.
 */
const embeddedTurns = new Map<string, Promise<unknown>>();

function inTurn<T>(env: Record<string, string>, work: () => Promise<T>): Promise<T> {
  if (env.DATABASE_URL) return work();
  const done = (embeddedTurns.get(env.DATA_DIR) ?? Promise.resolve()).then(work, work);
  embeddedTurns.set(env.DATA_DIR, done.catch(() => undefined));
  return done;
}

/**
 * The CLI in this process: what the binary runs (runAdminCommand), with only `env` for
 * environment (as a process would have it), stdout and stderr collected as strings.
 */
function cliInProcess(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return inTurn(env, async () => {
    let stdout = '';
    let stderr = '';
    const code = await runAdminCommand(args, {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdout: { write: (text) => void (stdout += text) },
      stderr: { write: (text) => void (stderr += text) },
    });
    return { code, stdout, stderr };
  });
}

/** A --json run that succeeded: stdout must be one JSON document and nothing else. */
async function cliJson(env: Record<string, string>, ...args: string[]): Promise<any> {
  const run = await cliInProcess(env, ...args, '--json');
  assert.is(run.code, 0, `${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** A refused run: the exit code, nothing on stdout, one line on stderr. */
async function refused(env: Record<string, string>, code: number, args: string[], stderr: RegExp, cli = cliInProcess): Promise<void> {
  const run = await cli(env, ...args);
  assert.is(run.code, code, `${args.join(' ')}: ${run.stderr}`);
  assert.is(run.stdout, '', 'nothing on stdout');
  assert.match(run.stderr, stderr);
}

const secrets = () => ({ JWT_SECRET: randomBytes(32).toString('hex'), DATA_KEY: randomBytes(32).toString('hex') });
const DELIVERY_FIELDS = ['attempts', 'external_id', 'id', 'last_error', 'processed_at', 'provider', 'reason', 'received_at', 'scope', 'state'];
const HOUR = 3_600_000;

// ------------------------------------------------------------------ without a running service

const offline = suite('admin CLI on its own');
let database: TestDatabase;
let env: Record<string, string>;

offline.before(async () => {
  built = await buildService();
  // The suite's database is migrated, as an operator's would be: a copy of the run's migrated
  // database (tests/run.mjs), or else by npm run migrate. The two tests of `migrate` itself
  // use databases of their own.
  database = await createTestDatabase({ migrated: true });
  env = { ...database.env, ...secrets() };
  if (!process.env.GATEHOUSE_TEST_MIGRATED_TEMPLATE) {
    const migrate = spawnScript('server/src/roles/migrate.ts', [], env);
    if ((await migrate.exited) !== 0) throw new Error(`npm run migrate failed: ${migrate.output()}`);
  }
});

offline.after(async () => {
  await database.drop();
});

offline('the npm run admin path (tsx, from the sources) answers as the built CLI does', async () => {
  const [fromSources, fromBuild] = await Promise.all([cliFromSources(env, 'inbox', '--help'), cliProcess(env, 'inbox', '--help')]);
  assert.is(fromSources.code, 0, fromSources.stderr);
  assert.match(fromSources.stdout, /inbox/);
  assert.equal(fromSources, fromBuild);
  assert.equal(await cliInProcess(env, 'inbox', '--help'), fromBuild, 'in process as well');
});

type Query = <Row = any>(text: string, values?: unknown[]) => Promise<Row[]>;

/**
 * Statements on the database of `target` between CLI runs, on one connection: to the server,
 * or to the embedded files, opened for the while (about a second each time, so statements
 * that go together share one opening). No CLI may run inside `work`.
 */
async function withSqlOn<T>(target: Record<string, string>, work: (query: Query) => Promise<T>): Promise<T> {
  if (target.DATABASE_URL) {
    const client = new pg.Client({ connectionString: target.DATABASE_URL });
    await client.connect();
    try {
      return await work(async (text, values = []) => (await client.query(text, values)).rows);
    } finally {
      await client.end();
    }
  }
  const db = await PGlite.create(join(target.DATA_DIR, 'pgdata'), { startParams: EMBEDDED_START_PARAMS });
  try {
    return await work(async <Row,>(text: string, values: unknown[] = []) => (await db.query<Row>(text, values)).rows);
  } finally {
    await db.close();
  }
}

/** One statement on the database of `target`. */
function sqlOn<Row = any>(target: Record<string, string>, text: string, values: unknown[] = []): Promise<Row[]> {
  return withSqlOn(target, (query) => query<Row>(text, values));
}

/** The same on the suite's database. */
function sql<Row = any>(text: string, values: unknown[] = []): Promise<Row[]> {
  return sqlOn(env, text, values);
}

/** Statements on the suite's database, on one connection. */
function withSql<T>(work: (query: Query) => Promise<T>): Promise<T> {
  return withSqlOn(env, work);
}

/** `work` on the connection given, or on one of its own. */
function onConnection<T>(query: Query | undefined, work: (query: Query) => Promise<T>): Promise<T> {
  return query ? work(query) : withSql(work);
}

type Seed = { provider: string; state: string; hoursAgo: number; scope?: string };
type Seeded = Seed & { id: string; receivedAt: string; payload: string };

/** Inbox rows as the intake and worker would have left them, in one statement. */
async function seedDeliveries(seeds: Seed[], query: Query): Promise<Seeded[]> {
  const now = Date.now();
  const rows = seeds.map((seed) => {
    const id = randomUUID();
    return { ...seed, id, receivedAt: new Date(now - seed.hoursAgo * HOUR).toISOString(), payload: JSON.stringify({ seeded: id, note: 'ünïcode' }) };
  });
  const values: unknown[] = [];
  const tuples = rows.map((row) => {
    const dead = row.state === 'dead';
    values.push(row.id, row.provider, row.scope ?? '', `evt_${row.id}`, row.payload, row.receivedAt, row.state, row.state === 'received' ? null : row.receivedAt, dead ? 8 : 1, dead ? 'Error: no such account' : null);
    const n = values.length - 10;
    const p = (i: number) => `$${n + i}`;
    return `(${p(1)}::uuid, ${p(2)}, ${p(3)}, ${p(4)}, convert_to(${p(5)}, 'UTF8'), ${p(6)}::timestamptz, ${p(7)}, ${p(8)}::timestamptz, ${p(9)}::int, ${p(10)})`;
  });
  await query(
    `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at, state, processed_at, attempts, last_error) VALUES ${tuples.join(', ')}`,
    values,
  );
  return rows;
}

/** The rows' states in the order asked, undefined where a row is gone: one query (one opening of the embedded files). */
async function statesOf(...ids: string[]): Promise<Array<string | undefined>> {
  const rows = await sql<{ id: string; state: string }>('SELECT id, state FROM webhook_inbox WHERE id = ANY($1::uuid[])', [ids]);
  return ids.map((id) => rows.find((row) => row.id === id)?.state);
}

/** Runs `work` with the environment of a fresh, empty database of its own, dropped afterwards. */
async function onFreshDatabase(work: (freshEnv: Record<string, string>) => Promise<void>): Promise<void> {
  const fresh = await createTestDatabase();
  try {
    await work({ ...env, ...fresh.env });
  } finally {
    await fresh.drop();
  }
}

offline('migrate status lists every migration as pending on a fresh database, and applies none of them', async () => {
  await onFreshDatabase(async (freshEnv) => {
    const status = await cliJson(freshEnv, 'migrate', 'status');
    assert.equal(status.migrations.map((m: any) => m.name), MIGRATIONS.map((m) => m.name));
    assert.ok(status.migrations.every((m: any) => m.state === 'pending' && m.applied_at === null));
    assert.is(status.pending, MIGRATIONS.length);
    const [table] = await sqlOn(freshEnv, `SELECT to_regclass('schema_migrations') IS NULL AS absent, to_regclass('accounts') IS NULL AS no_accounts`);
    assert.equal(table, { absent: true, no_accounts: true }, 'the command created nothing');
  });
});

offline('after npm run migrate, migrate status lists every migration as applied, with its time', async () => {
  await onFreshDatabase(async (freshEnv) => {
    const migrate = spawnScript('server/src/roles/migrate.ts', [], freshEnv);
    assert.is(await migrate.exited, 0, migrate.output());
    const status = await cliJson(freshEnv, 'migrate', 'status');
    assert.equal(status.migrations.map((m: any) => m.name), MIGRATIONS.map((m) => m.name));
    for (const migration of status.migrations) {
      assert.is(migration.state, 'applied', migration.name);
      assert.ok(Date.now() - Date.parse(migration.applied_at) < 600_000, `${migration.name} applied just now`);
    }
    assert.is(status.pending, 0);
    const human = await cliInProcess(freshEnv, 'migrate', 'status');
    assert.is(human.code, 0);
    assert.match(human.stdout, /0006-operator-surface\s+applied/);
    assert.match(human.stdout, /Every migration is applied/);
  });
});

const EVENTS_COMMANDS = [
  'events endpoints add', 'events endpoints list', 'events endpoints update', 'events endpoints rotate', 'events endpoints remove', 'events endpoints test',
  'events deliveries list', 'events deliveries show', 'events deliveries retry',
];

offline('--help on the root, on every group and on every command exits 0, names the command and the exit codes', async () => {
  const commands = [[], ['inbox'], ['migrate'], ['promote'], ['demote'], ['inbox', 'stats'], ['inbox', 'list'], ['inbox', 'show'], ['inbox', 'replay'], ['inbox', 'purge'], ['migrate', 'status'], ['sessions'], ['sessions', 'revoke'], ['audit'], ['audit', 'export'],
    ['events'], ['events', 'endpoints'], ['events', 'deliveries'], ...EVENTS_COMMANDS.map((command) => command.split(' ')),
    ['role'], ['role', 'set'], ['accounts'], ['accounts', 'list'], ['accounts', 'show']];
  const runs = await Promise.all(commands.map((command) => cliInProcess(env, ...command, '--help')));
  runs.forEach((run, i) => {
    const name = ['admin', ...commands[i]].join(' ');
    assert.is(run.code, 0, `${name} --help: ${run.stderr}`);
    assert.ok(run.stdout.startsWith(`Usage: ${name} `), `${name}: ${run.stdout.split('\n')[0]}`);
    assert.match(run.stdout, /Exit codes:[\s\S]*2 {2}usage error[\s\S]*3 {2}not found/);
  });
  assert.match(runs[0].stdout, /promote[\s\S]*demote[\s\S]*sessions[\s\S]*inbox[\s\S]*migrate/);
  assert.match(runs[11].stdout, /revoke/);
  assert.match(runs[12].stdout, /--json/);
  assert.match(runs[1].stdout, /stats[\s\S]*list[\s\S]*show[\s\S]*replay[\s\S]*purge/);
  assert.match(runs[9].stdout, /--yes/);
  assert.match(runs[0].stdout, /inbox[\s\S]*audit[\s\S]*migrate/);
  assert.match(runs[13].stdout, /export/);
  assert.match(runs[14].stdout, /--since <time>[\s\S]*--until <time>[\s\S]*--account <id>/);
  assert.match(runs[0].stdout, /audit[\s\S]*events[\s\S]*migrate/);
  assert.match(runs[15].stdout, /endpoints[\s\S]*deliveries/);
  assert.match(runs[16].stdout, /add[\s\S]*list[\s\S]*update[\s\S]*rotate[\s\S]*remove[\s\S]*test/);
  assert.match(runs[17].stdout, /list[\s\S]*show[\s\S]*retry/);
  const help = (command: string) => runs[18 + EVENTS_COMMANDS.indexOf(command)].stdout;
  assert.match(help('events endpoints add'), /<url>[\s\S]*--events <types>[\s\S]*security\.changed[\s\S]*--description <text>[\s\S]*--json/);
  assert.match(help('events endpoints update'), /--url <url>[\s\S]*--events <types>[\s\S]*--enable[\s\S]*--disable[\s\S]*--description <text>/);
  assert.match(help('events endpoints rotate'), /--grace <seconds>[\s\S]*0\s+to\s+86400/);
  assert.match(help('events deliveries list'), /--endpoint <id>[\s\S]*--state <state>.*pending, delivered, dead,\s+skipped[\s\S]*--type <type>[\s\S]*--limit <n>[\s\S]*--cursor <cursor>/);
  assert.match(help('events deliveries retry'), /\[id\][\s\S]*--dead[\s\S]*--endpoint <id>[\s\S]*--since <time>/);
  for (const command of EVENTS_COMMANDS) assert.match(help(command), /--json/, command);
  const [role, roleSet, accounts, accountsList, accountsShow] = runs.slice(-5).map((run) => run.stdout);
  assert.match(role, /set/);
  assert.match(roleSet, /<email>[\s\S]*<role>[\s\S]*admin or user[\s\S]*--json/);
  assert.match(accounts, /list[\s\S]*show/);
  assert.match(accountsList, /--q <text>[\s\S]*--limit <n>[\s\S]*--cursor <cursor>[\s\S]*--json/);
  assert.match(accountsShow, /<account>[\s\S]*account id, or the e-mail address/);
  assert.match(runs[0].stdout, /role[\s\S]*accounts/);
});

offline('an unknown command, an unknown option, a missing or extra argument and conflicting flags exit 2', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['inbox', 'list', '--frob'], /unknown option '--frob'/],
    [['inbox', 'stats', 'extra'], /too many arguments/],
    [['promote'], /missing required argument 'email'/],
    [['sessions', 'revoke'], /missing required argument 'email'/],
    [['sessions', 'revoke', 'a@example.com', 'b@example.com'], /too many arguments/],
    [['inbox'], /Usage: admin inbox/],
    [['inbox', 'purge', '--yes'], /required option '--state <state>' not specified/],
    [['inbox', 'replay', '--dead', '--ignored'], /'--dead' cannot be used with option '--ignored'/],
  ];
  const runs = await Promise.all(cases.map(([args]) => cliInProcess(env, ...args)));
  runs.forEach((run, i) => {
    assert.is(run.code, 2, `${cases[i][0].join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, cases[i][1]);
  });
});

offline('bad values exit 2 naming the option, before the database is touched', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['inbox', 'list', '--since', 'yesterday'], /--since: /],
    [['inbox', 'list', '--limit', '500'], /--limit: .*200/],
    [['inbox', 'list', '--limit', 'ten'], /--limit: /],
    [['inbox', 'list', '--provider', 'stripe'], /--provider: .*billing/],
    [['inbox', 'list', '--state', 'done'], /--state: /],
    [['inbox', 'replay', '--dead', '--until', '2026-13-01'], /--until: /],
    [['inbox', 'purge', '--state', 'received', '--yes'], /--state: .*dead/],
    [['inbox', 'purge', '--state', 'dead', '--before', 'now', '--yes'], /--before: /],
    [['promote', 'not-an-address'], /<email>: /],
    [['sessions', 'revoke', 'Eve <eve@example.com>'], /<email>: /],
    [['inbox', 'show', 'x'.repeat(101)], /<id>: /],
    [['inbox', 'replay'], /give a delivery id, or --dead or --ignored/],
    [['inbox', 'replay', randomUUID(), '--dead'], /either a delivery id or --dead\/--ignored/],
    [['inbox', 'replay', randomUUID(), '--provider', 'billing'], /--provider, --since and --until/],
    [['audit', 'export', '--account', 'abc'], /--account: must be an account id/],
    [['audit', 'export', '--since', 'last week'], /--since: /],
    [['audit', 'export', '--since', '2026-11-02T00:00:00Z', '--until', '2026-11-01T00:00:00Z'], /--since: must not be after until/],
  ];
  // A database that cannot be reached: the values are refused before any connection is tried.
  const unreachable = { ...env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/gatehouse' };
  // Each in process, and some as processes too, which never load the service: a value refused
  // by a schema, a bad address, a missing choice. Both say it in the same words (the rules'
  // wording comes with the schemas, not with the server).
  const asProcesses = [0, 8, 11];
  const runs = await Promise.all([
    ...cases.map(([args], i) => cliInProcess(unreachable, ...args, '--json').then((run) => [i, run] as const)),
    ...asProcesses.map((i) => cliProcess(unreachable, ...cases[i][0], '--json').then((run) => [i, run] as const)),
  ]);
  for (const [i, run] of runs) {
    assert.is(run.code, 2, `${cases[i][0].join(' ')}: ${run.stderr}`);
    assert.is(run.stdout, '');
    assert.match(run.stderr, cases[i][1]);
  }
  for (const i of asProcesses) {
    const [inProcess, asProcess] = runs.filter(([index]) => index === i).map(([, run]) => run.stderr);
    assert.is(asProcess, inProcess, cases[i][0].join(' '));
  }
  assert.match(runs[0][1].stderr, /--since: must be an ISO-8601 date and time/);
});

offline('promote makes an account admin, promoting again changes nothing; demote refuses the last admin (exit 1), and makes it a user once another is', async () => {
  // Keys sealed under the suite's DATA_KEY, as the service would: the CLI refuses to start
  // on a database holding secrets none of its keys opens.
  const [id, otherId] = await withSql(async (query) => [await insertAccount('ops@example.com', query), await insertAccount('ops.two@example.com', query)]);
  // Whatever other tests made admins, this one needs ops alone to be one.
  await sql(`UPDATE accounts SET role = 'user' WHERE role = 'admin'`);
  const promoted = await cliJson(env, 'promote', 'Ops@Example.com');
  assert.equal({ ...promoted, account: { ...promoted.account, created_at: undefined } }, {
    success: true,
    account: { id, email: 'ops@example.com', name: 'Signed Out', company: null, plan: 'free', role: 'admin', email_verified: false, created_at: undefined, mfa: false },
    changed: true,
  });
  assert.is((await sql('SELECT role FROM accounts WHERE id = $1', [id]))[0].role, 'admin');
  assert.is((await cliJson(env, 'promote', 'ops@example.com')).changed, false);

  await refused(env, 1, ['demote', 'ops@example.com'], /^error: This is the last administrator: make another account an admin before making this one a user\.\n$/, cliProcess);
  assert.is((await sql('SELECT role FROM accounts WHERE id = $1', [id]))[0].role, 'admin');

  assert.is((await cliJson(env, 'role', 'set', 'ops.two@example.com', 'admin')).account.id, otherId);
  const demoted = await cliInProcess(env, 'demote', 'ops@example.com');
  assert.is(demoted.code, 0, demoted.stderr);
  assert.match(demoted.stdout, /ops@example\.com \(account \d+\) is now a regular user/);
  assert.is((await sql('SELECT role FROM accounts WHERE id = $1', [id]))[0].role, 'user');
  await refused(env, 2, ['role', 'set', 'ops@example.com', 'root'], /^error: invalid value: <role>: must be one of "user", "admin"\n$/);
});

offline('accounts list and show: as the console searches and shows accounts, without API keys; unknown or bad ones refused', async () => {
  const ids = await withSql(async (query) => [await insertAccount('listed.one@example.com', query), await insertAccount('listed.two@example.com', query)]);
  const listed = await cliJson(env, 'accounts', 'list', '--q', 'LISTED.');
  assert.equal(listed.items.map((item: { id: number }) => item.id), [...ids].reverse());
  assert.equal(Object.keys(listed.items[0]).sort(), ['created_at', 'email', 'email_verified', 'id', 'mfa', 'name', 'plan', 'role']);
  const paged = await cliJson(env, 'accounts', 'list', '--q', 'listed.', '--limit', '1');
  assert.equal([paged.items.map((item: { id: number }) => item.id), paged.next_cursor], [[ids[1]], String(ids[1])]);
  assert.equal((await cliJson(env, 'accounts', 'list', '--q', 'listed.', '--cursor', paged.next_cursor)).items.map((item: { id: number }) => item.id), [ids[0]]);
  const table = await cliInProcess(env, 'accounts', 'list', '--q', 'listed.two');
  assert.match(table.stdout, new RegExp(`^id\\s+email\\s+name\\s+plan\\s+role\\s+verified\\s+mfa\\s+created at\\n${ids[1]}\\s+listed\\.two@example\\.com\\s+Signed Out\\s+free\\s+user\\s+no\\s+no\\s+\\S+\\n$`));

  const shown = await cliJson(env, 'accounts', 'show', String(ids[0]));
  assert.equal(Object.keys(shown).sort(), ['account', 'activity', 'identities', 'sessions', 'success']);
  assert.is(shown.account.email, 'listed.one@example.com');
  assert.not.ok('api_key' in shown.account);
  assert.is((await cliJson(env, 'accounts', 'show', 'Listed.One@example.com')).account.id, ids[0]);
  const human = await cliInProcess(env, 'accounts', 'show', 'listed.one@example.com');
  assert.match(human.stdout, new RegExp(`^id:\\s+${ids[0]}\\nemail:\\s+listed\\.one@example\\.com\\n`));
  assert.match(human.stdout, /\nidentities:\n  none\n\nlive sessions:\n  none\n/);

  await refused(env, 3, ['accounts', 'show', 'nobody.listed@example.com'], /^error: No account has that e-mail address\.\n$/);
  await refused(env, 3, ['accounts', 'show', '2147483647'], /^error: No such account\.\n$/);
  await refused(env, 2, ['accounts', 'show', 'nobody'], /^error: <account>: "nobody" is neither an account id nor a bare e-mail address/);
  await refused(env, 2, ['accounts', 'show', '99999999999'], /^error: <account>: "99999999999" is not an account id/);
  await refused(env, 2, ['accounts', 'list', '--limit', '201'], /^error: invalid value: --limit: must be at most 200\n$/);
  await refused(env, 2, ['accounts', 'list', '--cursor', 'abc'], /^error: invalid value: --cursor: must be a next_cursor this list gave out\n$/);
});

offline('promote and demote of an unknown e-mail address exit 3', async () => {
  await refused(env, 3, ['promote', 'nobody@example.com'], /^error: No account has that e-mail address\.\n$/, cliProcess);
  await refused(env, 3, ['demote', 'nobody@example.com', '--json'], /No account has that e-mail address/, cliProcess);
});

/** The inbox every inbox test starts from: these rows and no other. */
const SEEDS: Seed[] = [
  { provider: 'billing', state: 'dead', hoursAgo: 6 },
  { provider: 'billing', state: 'dead', hoursAgo: 5 },
  { provider: 'billing', state: 'dead', hoursAgo: 4 },
  { provider: 'billing', state: 'processed', hoursAgo: 30 },
  { provider: 'billing', state: 'ignored', hoursAgo: 3 },
  { provider: 'payment', state: 'dead', hoursAgo: 2, scope: 'site_cli' },
  { provider: 'payment', state: 'processed', hoursAgo: 50, scope: 'site_cli' },
  { provider: 'payment', state: 'processed', hoursAgo: 1, scope: 'site_cli' },
  { provider: 'messengertwo', state: 'received', hoursAgo: 1.5, scope: 'ch_cli' },
];

/** The rows of the inbox the current test seeded. */
let seeded: Seeded[];
/** Empties the inbox and seeds SEEDS, for the test that calls it. */
async function freshInbox(connection?: Query): Promise<void> {
  await onConnection(connection, async (query) => {
    await query('DELETE FROM webhook_inbox');
    seeded = await seedDeliveries(SEEDS, query);
  });
}
const seededId = (provider: string, state: string, hoursAgo: number) => seeded.find((s) => s.provider === provider && s.state === state && s.hoursAgo === hoursAgo)!.id;
/** Newest first, as the list orders them. */
const newestFirst = (rows: Seeded[]) => [...rows].sort((a, b) => a.hoursAgo - b.hoursAgo).map((row) => row.id);

offline('inbox stats --json has the API shape and counts seeded rows per provider and state', async () => {
  await freshInbox();
  const stats = await cliJson(env, 'inbox', 'stats');
  assert.is(stats.success, true);
  assert.equal(stats.providers.map((p: any) => p.provider), [...PROVIDER_NAMES]);
  const of = (name: string) => stats.providers.find((p: any) => p.provider === name);
  assert.equal(of('billing'), { provider: 'billing', received: 0, processed: 1, ignored: 1, dead: 3, oldest_pending_seconds: null });
  assert.equal(of('payment'), { provider: 'payment', received: 0, processed: 2, ignored: 0, dead: 1, oldest_pending_seconds: null });
  assert.equal(of('operator'), { provider: 'operator', received: 0, processed: 0, ignored: 0, dead: 0, oldest_pending_seconds: null });
  const waiting = of('messengertwo');
  assert.is(waiting.received, 1);
  assert.ok(waiting.oldest_pending_seconds >= 5400 && waiting.oldest_pending_seconds < 5400 + 300, String(waiting.oldest_pending_seconds));

  const human = await cliInProcess(env, 'inbox', 'stats');
  assert.is(human.code, 0, human.stderr);
  assert.match(human.stdout, /^provider\s+received\s+processed\s+ignored\s+dead\s+oldest pending\n/);
  assert.match(human.stdout, /\nbilling\s+0\s+1\s+1\s+3\s+-\n/);
  assert.match(human.stdout, /\nmessengertwo\s+1\s+0\s+0\s+0\s+1h 30m\n/);
});

offline('inbox list --json lists newest first with the API fields, and filters by provider, state and time', async () => {
  await freshInbox();
  const all = await cliJson(env, 'inbox', 'list');
  assert.equal(all.items.map((item: any) => item.id), newestFirst(seeded));
  assert.is(all.next_cursor, null);
  assert.equal(Object.keys(all.items[0]).sort(), DELIVERY_FIELDS, 'no payload in a list');
  const dead = all.items.find((item: any) => item.id === seededId('payment', 'dead', 2));
  assert.equal({ ...dead, received_at: undefined, processed_at: undefined }, {
    id: seededId('payment', 'dead', 2), provider: 'payment', scope: 'site_cli', external_id: `evt_${dead.id}`, state: 'dead',
    received_at: undefined, processed_at: undefined, attempts: 8, last_error: 'Error: no such account', reason: null,
  });

  const billingDead = await cliJson(env, 'inbox', 'list', '--provider', 'billing', '--state', 'dead');
  assert.equal(billingDead.items.map((item: any) => item.id), newestFirst(seeded.filter((s) => s.provider === 'billing' && s.state === 'dead')));

  const since = new Date(Date.now() - 4.5 * HOUR).toISOString();
  const until = new Date(Date.now() - 1.75 * HOUR).toISOString();
  const window = await cliJson(env, 'inbox', 'list', '--since', since, '--until', until);
  assert.equal(window.items.map((item: any) => item.id), [seededId('payment', 'dead', 2), seededId('billing', 'ignored', 3), seededId('billing', 'dead', 4)]);

  const human = await cliInProcess(env, 'inbox', 'list', '--state', 'received');
  assert.is(human.code, 0, human.stderr);
  assert.match(human.stdout, new RegExp(`${seededId('messengertwo', 'received', 1.5)}\\s+messengertwo\\s+ch_cli\\s+received`));
});

offline('inbox list pages with --limit and --cursor through every row exactly once; a forged cursor exits 2', async () => {
  await freshInbox();
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: any = await cliJson(env, 'inbox', 'list', '--limit', '4', ...(cursor ? ['--cursor', cursor] : []));
    assert.ok(page.items.length <= 4);
    ids.push(...page.items.map((item: any) => item.id));
    cursor = page.next_cursor;
    pages++;
  } while (cursor);
  assert.is(pages, 3);
  assert.equal(ids, newestFirst(seeded));
  const human = await cliInProcess(env, 'inbox', 'list', '--limit', '2');
  assert.match(human.stdout, /More: add --cursor \S+\n$/);
  await refused(env, 2, ['inbox', 'list', '--cursor', 'bm90LWEtY3Vyc29y'], /--cursor: is not a cursor this list gave out/);
});

offline('inbox show <id> --json gives the delivery with its payload as received; an unknown id exits 3', async () => {
  await freshInbox();
  const row = seeded.find((s) => s.provider === 'payment' && s.state === 'dead')!;
  const shown = await cliJson(env, 'inbox', 'show', row.id);
  assert.is(shown.success, true);
  assert.equal(Object.keys(shown.delivery).sort(), [...DELIVERY_FIELDS, 'payload'].sort());
  assert.is(shown.delivery.id, row.id);
  assert.is(shown.delivery.payload, row.payload);
  assert.is(shown.delivery.received_at, row.receivedAt);

  const human = await cliInProcess(env, 'inbox', 'show', row.id);
  assert.is(human.code, 0, human.stderr);
  assert.match(human.stdout, /^id:\s+\S+\nprovider:\s+payment\n/);
  assert.ok(human.stdout.endsWith(`payload:\n${row.payload}\n`));

  await refused(env, 3, ['inbox', 'show', randomUUID(), '--json'], /^error: No such delivery\.\n$/);
  await refused(env, 3, ['inbox', 'show', 'not-a-uuid'], /No such delivery/);
});

offline('inbox replay <id> puts a dead delivery back to received with a fresh job', async () => {
  await freshInbox();
  const id = seededId('billing', 'dead', 6);
  assert.equal(await cliJson(env, 'inbox', 'replay', id), { success: true });
  await withSql(async (query) => {
    const [row] = await query('SELECT state, processed_at, enqueued_at IS NOT NULL AS enqueued FROM webhook_inbox WHERE id = $1', [id]);
    assert.equal(row, { state: 'received', processed_at: null, enqueued: true });
    const [jobs] = await query(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'webhook-process' AND data->>'inboxId' = $1`, [id]);
    assert.is(jobs.n, 1, 'one job for the worker, committed with the row');
  });
  await refused(env, 3, ['inbox', 'replay', randomUUID()], /No such delivery/);
});

offline('inbox replay --dead --provider billing replays exactly the dead billing deliveries and says how many', async () => {
  await freshInbox();
  const result = await cliJson(env, 'inbox', 'replay', '--dead', '--provider', 'billing');
  assert.equal(result, { success: true, replayed: 3 });
  const ids = [seededId('billing', 'dead', 6), seededId('billing', 'dead', 5), seededId('billing', 'dead', 4), seededId('payment', 'dead', 2), seededId('billing', 'ignored', 3)];
  assert.equal(await statesOf(...ids), ['received', 'received', 'received', 'dead', 'ignored'], 'another provider and another state are left alone');
  const again = await cliInProcess(env, 'inbox', 'replay', '--dead', '--provider', 'billing');
  assert.is(again.code, 0, again.stderr);
  assert.match(again.stdout, /^Replayed 0 dead deliveries \(from billing\)/);
  assert.equal(await cliJson(env, 'inbox', 'replay', '--ignored', '--provider', 'billing', '--since', seeded[0].receivedAt), { success: true, replayed: 1 });
  assert.equal(await statesOf(seededId('billing', 'ignored', 3)), ['received']);
});

offline('inbox purge refuses without --yes (exit 2) and deletes nothing', async () => {
  await freshInbox();
  const before = new Date(Date.now() - 10 * HOUR).toISOString();
  await refused(env, 2, ['inbox', 'purge', '--state', 'processed', '--before', before], /add --yes/);
  const [count] = await sql(`SELECT count(*)::int AS n FROM webhook_inbox`);
  assert.is(count.n, seeded.length);
});

offline('inbox purge --yes deletes only the chosen state received before the date (and provider)', async () => {
  await freshInbox();
  const before = new Date(Date.now() - 10 * HOUR).toISOString();
  assert.equal(await cliJson(env, 'inbox', 'purge', '--state', 'processed', '--before', before, '--yes'), { success: true, purged: 2 });
  const left = await sql<{ id: string }>('SELECT id FROM webhook_inbox');
  const gone = [seededId('billing', 'processed', 30), seededId('payment', 'processed', 50)];
  assert.equal(left.map((row) => row.id).sort(), seeded.map((s) => s.id).filter((id) => !gone.includes(id)).sort());

  const human = await cliInProcess(env, 'inbox', 'purge', '--state', 'dead', '--provider', 'billing', '--yes');
  assert.is(human.code, 0, human.stderr);
  assert.match(human.stdout, /^Purged 3 dead deliveries \(from billing, received before \S+\)\.\n$/);
  assert.equal(await cliJson(env, 'inbox', 'purge', '--state', 'dead', '--yes'), { success: true, purged: 1 });
  assert.equal(await statesOf(seededId('payment', 'dead', 2), seededId('payment', 'processed', 1)), [undefined, 'processed'], 'a processed one after --before is kept');
});

offline('every action is in the audit log as admin.*, without an account, from the CLI', async () => {
  const mark = await withSql(async (query) => {
    const [{ mark }] = await query<{ mark: number }>('SELECT coalesce(max(id), 0)::int AS mark FROM audit_events');
    await freshInbox(query);
    await insertAccount('audited@example.com', query);
    // Another admin, so that the demote below does not leave none.
    await query(`UPDATE accounts SET role = 'admin' WHERE id = $1`, [await insertAccount('audited.other.admin@example.com', query)]);
    return mark;
  });
  // One of each action: a role changed and changed back (and a promote that changes nothing), inbox reads, replays and a purge.
  for (const args of [['promote', 'audited@example.com'], ['promote', 'audited@example.com'], ['demote', 'audited@example.com'], ['inbox', 'stats'], ['inbox', 'show', seededId('payment', 'dead', 2)], ['inbox', 'replay', seededId('billing', 'dead', 6)], ['inbox', 'replay', '--dead'], ['inbox', 'purge', '--state', 'processed', '--yes']]) {
    await cliJson(env, ...args);
  }
  const rows = await sql<{ event: string; account_id: number | null; ip: string | null; user_agent: string }>(
    'SELECT event, account_id, ip, user_agent FROM audit_events WHERE id > $1 ORDER BY id',
    [mark],
  );
  assert.ok(rows.length > 0);
  for (const row of rows) {
    assert.match(row.event, /^admin\./);
    assert.equal({ account_id: row.account_id, ip: row.ip, user_agent: row.user_agent }, { account_id: null, ip: null, user_agent: 'gatehouse-cli' });
  }
  const events = new Set(rows.map((row) => row.event));
  for (const event of ['admin.role_changed', 'admin.inbox_read', 'admin.delivery_read', 'admin.delivery_replayed', 'admin.deliveries_replayed', 'admin.deliveries_purged']) {
    assert.ok(events.has(event), event);
  }
  const changes = rows.filter((row) => row.event === 'admin.role_changed');
  assert.is(changes.length, 2, 'promote and demote; the promote that changed nothing is not an action');
});

offline('audit export writes the activity log as NDJSON on stdout, oldest first, filtered, past one page; the export is recorded', async () => {
  const { accountId, otherId, mark } = await withSql(async (query) => {
    const accountId = await insertAccount('exported@example.com', query);
    const otherId = await insertAccount('not.exported@example.com', query);
    // 1,500 events a second apart in 2023 (more than a page of 1000), one of another account among them.
    await query(
      `INSERT INTO audit_events (account_id, event, at, ip, user_agent, data)
       SELECT $1::int, 'login.succeeded', '2023-01-01T00:00:00Z'::timestamptz + n * interval '1 second', '192.0.2.1', 'seed', jsonb_build_object('n', n)
       FROM generate_series(0, 1499) AS n`,
      [accountId],
    );
    await query(`INSERT INTO audit_events (account_id, event, at, data) VALUES ($1, 'logout', '2023-01-01T00:10:00Z', '{"other": true}')`, [otherId]);
    const [{ mark }] = await query<{ mark: number }>('SELECT max(id)::int AS mark FROM audit_events');
    return { accountId, otherId, mark };
  });
  const since = '2023-01-01T00:01:40Z';
  const until = '2023-01-01T00:23:20Z';
  const run = await cliInProcess(env, 'audit', 'export', '--account', String(accountId), '--since', since, '--until', until);
  assert.is(run.code, 0, run.stderr);
  assert.ok(run.stdout.endsWith('\n'));
  const lines = run.stdout.slice(0, -1).split('\n').map((line) => JSON.parse(line));
  // At or after 100 s, before 1400 s: n from 100 to 1399.
  assert.equal(lines.map((line) => line.data.n), Array.from({ length: 1300 }, (_, i) => i + 100));
  for (const line of lines) {
    assert.equal(Object.keys(line).sort(), ['account_id', 'at', 'data', 'event', 'id', 'ip', 'user_agent']);
    assert.is(line.account_id, accountId);
  }
  assert.equal(lines[0], { id: lines[0].id, at: '2023-01-01T00:01:40.000Z', account_id: accountId, event: 'login.succeeded', ip: '192.0.2.1', user_agent: 'seed', data: { n: 100 } });
  const ids = lines.map((line) => Number(line.id));
  assert.ok(ids.every((id, i) => i === 0 || id > ids[i - 1]), 'oldest first, none twice');

  const recorded = await sql('SELECT event, account_id, user_agent, data FROM audit_events WHERE id > $1 ORDER BY id', [mark]);
  assert.equal(recorded, [{ event: 'admin.audit_exported', account_id: null, user_agent: 'gatehouse-cli', data: { filter: { since, until, account_id: accountId } } }]);

  // Without a filter: every account's events, the other account's among them, and the record of the export before.
  const everything = await cliInProcess(env, 'audit', 'export', '--json');
  assert.is(everything.code, 0, everything.stderr);
  const all = everything.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.ok(all.some((line) => line.account_id === otherId && line.event === 'logout'));
  assert.ok(all.some((line) => line.event === 'admin.audit_exported'));
  assert.is(all.filter((line) => line.data?.n !== undefined).length, 1500);
});

offline('audit export into a reader that stops early (| head -1) exits 0, says nothing on stderr, and the export is recorded', async () => {
  const { accountId, mark } = await withSql(async (query) => {
    const accountId = await insertAccount('piped@example.com', query);
    // About 400 KB of NDJSON, far more than a pipe holds: the CLI is still writing when its reader goes.
    await query(
      `INSERT INTO audit_events (account_id, event, at, ip, user_agent, data)
       SELECT $1::int, 'login.succeeded', '2024-01-01T00:00:00Z'::timestamptz + n * interval '1 second', '192.0.2.1', 'seed', jsonb_build_object('piped', n, 'pad', repeat('x', 100))
       FROM generate_series(0, 2999) AS n`,
      [accountId],
    );
    const [{ mark }] = await query<{ mark: number }>('SELECT max(id)::int AS mark FROM audit_events');
    return { accountId, mark };
  });
  // A process: a closed pipe is something only a process's stdout meets.
  const run = spawnBuilt(join(built!.dir, 'admin.js'), ['audit', 'export', '--account', String(accountId)], env);
  const first = await Promise.race([
    new Promise<string>((resolve) => run.child.stdout!.once('data', (chunk) => resolve(String(chunk).split('\n')[0]))),
    run.exited.then((exitCode) => Promise.reject(new Error(`the CLI exited ${exitCode} before printing a line: ${run.errors()}`))),
  ]);
  // What `head -1` does once it has its line: it goes, and the pipe's read end with it.
  run.child.stdout!.destroy();
  const code = await run.exited;
  assert.is(code, 0, run.errors());
  assert.is(run.errors(), '', 'no stack, no complaint: the reader had all it wanted');
  assert.equal(JSON.parse(first).data, { piped: 0, pad: 'x'.repeat(100) });
  const recorded = await sql('SELECT event, data FROM audit_events WHERE id > $1 ORDER BY id', [mark]);
  assert.equal(recorded, [{ event: 'admin.audit_exported', data: { filter: { since: null, until: null, account_id: accountId } } }], 'recorded when it began');
});

/** An account as the service would have made it: its key sealed under the suite's DATA_KEY (the CLI checks that at start). */
async function insertAccount(email: string, connection?: Query): Promise<number> {
  return onConnection(connection, async (query) => {
    const [account] = await query<{ id: number }>(
      `INSERT INTO accounts (email, password_hash, name, api_key_hash, api_key_sealed)
       VALUES ($1, 'x', 'Signed Out', sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'x') RETURNING id`,
      [email],
    );
    const sealed = createSecretBox([Buffer.from(env.DATA_KEY, 'hex')]).seal(randomBytes(32).toString('hex'), { column: 'accounts.api_key_sealed', row: account.id });
    await query('UPDATE accounts SET api_key_sealed = $1 WHERE id = $2', [sealed, account.id]);
    return account.id;
  });
}

offline('sessions revoke ends every live session and voids pending e-mail-change and reset links; both logs say so', async () => {
  const id = await withSql(async (query) => {
    const id = await insertAccount('signed.out@example.com', query);
    await query(
      `INSERT INTO sessions (id, account_id, created_at, auth_time, expires_at, revoked_at) VALUES
         ($1, $5, now(), now(), now() + interval '1 day', NULL), ($2, $5, now(), now(), now() + interval '1 day', NULL),
         ($3, $5, now() - interval '2 days', now() - interval '2 days', now() - interval '1 day', NULL), ($4, $5, now(), now(), now() + interval '1 day', now())`,
      [randomUUID(), randomUUID(), randomUUID(), randomUUID(), id],
    );
    await query(
      `INSERT INTO email_tokens (account_id, purpose, token_hash, created_at, expires_at) VALUES
         ($1, 'reset', sha256(convert_to('r', 'UTF8')), now(), now() + interval '1 hour'),
         ($1, 'email_change', sha256(convert_to('c', 'UTF8')), now(), now() + interval '1 day'),
         ($1, 'verify', sha256(convert_to('v', 'UTF8')), now(), now() + interval '1 day')`,
      [id],
    );
    return id;
  });
  assert.equal(await cliJson(env, 'sessions', 'revoke', 'Signed.Out@Example.com'), { success: true, account: { id, email: 'signed.out@example.com' }, revoked: 2 });
  const [left] = await sql(
    `SELECT (SELECT count(*)::int FROM sessions WHERE account_id = $1 AND revoked_at IS NULL AND expires_at > now()) AS live,
            (SELECT array_agg(purpose ORDER BY purpose) FROM email_tokens WHERE account_id = $1 AND used_at IS NULL) AS unused`,
    [id],
  );
  assert.equal(left, { live: 0, unused: ['verify'] }, 'the takeover links are void; a verification link is not one');

  const human = await cliInProcess(env, 'sessions', 'revoke', 'signed.out@example.com');
  assert.is(human.code, 0, human.stderr);
  assert.match(human.stdout, /^signed\.out@example\.com \(account \d+\) is signed out everywhere: 0 sessions ended\.\n.*owner was mailed/);
  await refused(env, 3, ['sessions', 'revoke', 'nobody@example.com'], /^error: No account has that e-mail address\.\n$/);

  const logged = await sql(
    `SELECT event, account_id, user_agent, data FROM audit_events
     WHERE event IN ('session.revoked', 'admin.sessions_revoked') AND (account_id = $1 OR (data->>'account')::int = $1) ORDER BY id`,
    [id],
  );
  assert.equal(logged, [
    { event: 'session.revoked', account_id: id, user_agent: null, data: { count: 2, by: 'admin' } },
    { event: 'admin.sessions_revoked', account_id: null, user_agent: 'gatehouse-cli', data: { account: id, revoked: 2 } },
    { event: 'session.revoked', account_id: id, user_agent: null, data: { count: 0, by: 'admin' } },
    { event: 'admin.sessions_revoked', account_id: null, user_agent: 'gatehouse-cli', data: { account: id, revoked: 0 } },
  ]);
});

offline('mfa reset removes the authenticator, passkeys and recovery codes of the account; both logs say so', async () => {
  const id = await withSql(async (query) => {
    const id = await insertAccount('lost.phone@example.com', query);
    await query(`INSERT INTO mfa_totp (account_id, secret_sealed, enabled_at, created_at) VALUES ($1, 'sealed', now(), now())`, [id]);
    await query(
      `INSERT INTO passkeys (id, account_id, credential_id, public_key, counter, user_handle, name, created_at) VALUES ($1, $2, 'cred-a', '\\x00', 0, 'h', 'Phone', now())`,
      [randomUUID(), id],
    );
    await query(`INSERT INTO mfa_recovery_codes (account_id, code_hash, created_at) SELECT $1, sha256(convert_to(g::text, 'UTF8')), now() FROM generate_series(1, 10) g`, [id]);
    return id;
  });
  assert.equal(await cliJson(env, 'mfa', 'reset', 'Lost.Phone@Example.com'), { success: true, account: { id, email: 'lost.phone@example.com' }, removed: { totp: true, passkeys: 1 } });
  const [left] = await sql(
    `SELECT (SELECT count(*)::int FROM mfa_totp WHERE account_id = $1) AS totp, (SELECT count(*)::int FROM passkeys WHERE account_id = $1) AS passkeys,
            (SELECT count(*)::int FROM mfa_recovery_codes WHERE account_id = $1) AS codes`,
    [id],
  );
  assert.equal(left, { totp: 0, passkeys: 0, codes: 0 });
  const human = await cliInProcess(env, 'mfa', 'reset', 'lost.phone@example.com');
  assert.is(human.code, 0, human.stderr);
  assert.is(human.stdout, `lost.phone@example.com (account ${id}) had no second factor: nothing was changed, and no notice was mailed.\n`);
  await refused(env, 3, ['mfa', 'reset', 'nobody@example.com'], /^error: No account has that e-mail address\.\n$/);
  const logged = await sql(`SELECT event, account_id, data FROM audit_events WHERE event IN ('mfa.disabled', 'admin.mfa_reset') ORDER BY id`);
  assert.equal(logged, [
    { event: 'mfa.disabled', account_id: id, data: { by: 'admin', totp: true, passkeys: 1 } },
    { event: 'admin.mfa_reset', account_id: null, data: { account: id, totp: true, passkeys: 1 } },
    // The second reset found nothing to remove: the owner's log is left alone.
    { event: 'admin.mfa_reset', account_id: null, data: { account: id, totp: false, passkeys: 0 } },
  ]);
});

/** The row of an event endpoint, its secrets opened with the suite's DATA_KEY. */
async function endpointRow(id: string, connection?: Query) {
  const [row] = await onConnection(connection, (query) => query('SELECT * FROM event_endpoints WHERE id = $1', [id]));
  if (!row) return undefined;
  const box = createSecretBox([Buffer.from(env.DATA_KEY, 'hex')]);
  const { secret_sealed, previous_secret_sealed, ...rest } = row;
  return { ...rest, secret: box.open(secret_sealed, secretPlace(id)), previous: previous_secret_sealed && box.open(previous_secret_sealed, previousSecretPlace(id)) };
}

const SECRET = /^secret:\s+(whsec_[A-Za-z0-9+/=]+)$/m;

offline('events endpoints add, list, update, rotate and remove change the endpoint as the API does; only add and rotate print a secret', async () => {
  const [{ mark }] = await sql<{ mark: number }>('SELECT coalesce(max(id), 0)::int AS mark FROM audit_events');
  // localhost: a developer's receiver, allowed outside production with no setting (docs/EVENTS.md).
  const url = 'https://localhost:8443/in?token=abc';
  const added = await cliInProcess(env, 'events', 'endpoints', 'add', url, '--events', 'account.created, security.changed', '--description', 'profiles');
  assert.is(added.code, 0, added.stderr);
  const id = /^id:\s+(\S+)$/m.exec(added.stdout)![1];
  const secret = SECRET.exec(added.stdout)![1];
  assert.match(added.stdout, /shown this once/);
  assert.ok(added.stdout.includes(`url:          ${url}\n`), "the endpoint's own listing shows its URL whole");
  const row = await endpointRow(id);
  assert.equal({ url: row!.url, events: row!.events, enabled: row!.enabled, description: row!.description, secret: row!.secret }, {
    url, events: ['account.created', 'security.changed'], enabled: true, description: 'profiles', secret,
  });
  assert.ok(Buffer.from(secret.slice(6), 'base64').length >= 24);

  const listed = await cliInProcess(env, 'events', 'endpoints', 'list', '--json');
  assert.is(listed.code, 0, listed.stderr);
  const item = JSON.parse(listed.stdout).items.find((endpoint: any) => endpoint.id === id);
  assert.equal(item, { id, url, description: 'profiles', events: ['account.created', 'security.changed'], enabled: true, created_at: row!.created_at.toISOString() });
  assert.not.ok(listed.stdout.includes(secret.slice(6)), 'a listing never shows a secret');

  const disabled = await cliJson(env, 'events', 'endpoints', 'update', id, '--disable', '--events', 'account.created');
  assert.equal({ ...disabled.endpoint, created_at: undefined }, { id, url, description: 'profiles', events: ['account.created'], enabled: false, created_at: undefined });
  const off = await endpointRow(id);
  assert.equal([off!.enabled, off!.events, off!.disabled_at !== null], [false, ['account.created'], true]);
  const enabled = await cliJson(env, 'events', 'endpoints', 'update', id, '--enable', '--events', 'all', '--description', '', '--url', 'https://localhost:8443/v2');
  assert.equal({ ...enabled.endpoint, created_at: undefined }, { id, url: 'https://localhost:8443/v2', description: null, events: [...EVENT_TYPES], enabled: true, created_at: undefined });
  assert.equal((({ enabled, events, description, url }) => ({ enabled, events, description, url }))((await endpointRow(id))!), { enabled: true, events: null, description: null, url: 'https://localhost:8443/v2' });

  const rotated = await cliJson(env, 'events', 'endpoints', 'rotate', id, '--grace', '3600');
  assert.match(rotated.secret, /^whsec_/);
  assert.is.not(rotated.secret, secret);
  const graced = await endpointRow(id);
  assert.equal([graced!.secret, graced!.previous], [rotated.secret, secret], 'the new secret signs, the old one beside it');
  const graceLeft = graced!.previous_secret_until.getTime() - Date.now();
  assert.ok(graceLeft > 3_500_000 && graceLeft <= 3_600_000, String(graceLeft));
  const again = await cliInProcess(env, 'events', 'endpoints', 'rotate', id);
  assert.is(again.code, 0, again.stderr);
  const third = SECRET.exec(again.stdout)![1];
  assert.match(again.stdout, /The old one no longer signs[\s\S]*shown this once/);
  const last = await endpointRow(id);
  assert.equal([last!.secret, last!.previous], [third, null]);

  const removed = await cliInProcess(env, 'events', 'endpoints', 'remove', id);
  assert.is(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, new RegExp(`^Endpoint ${id} is removed`));
  assert.is(await endpointRow(id), undefined);
  await refused(env, 3, ['events', 'endpoints', 'remove', id], /^error: No such event endpoint\.\n$/);
  await refused(env, 3, ['events', 'endpoints', 'rotate', id, '--json'], /No such event endpoint/);
  await refused(env, 3, ['events', 'deliveries', 'show', randomUUID()], /No such event delivery/);

  const logged = await sql('SELECT event, account_id, user_agent, data FROM audit_events WHERE id > $1 ORDER BY id', [mark]);
  assert.equal(logged.map((entry) => entry.event), [
    'admin.event_endpoint_created', 'admin.event_endpoints_read', 'admin.event_endpoint_updated', 'admin.event_endpoint_updated',
    'admin.event_endpoint_secret_rotated', 'admin.event_endpoint_secret_rotated', 'admin.event_endpoint_deleted',
  ]);
  assert.ok(logged.every((entry) => entry.account_id === null && entry.user_agent === 'gatehouse-cli'));
  for (const text of [JSON.stringify(logged), again.stdout, removed.stdout]) {
    assert.not.ok(/token=abc/.test(text), `the URL's query appears only in the endpoint's own listing: ${text}`);
    for (const shown of [secret, rotated.secret]) assert.not.ok(text.includes(shown.slice(6)), 'no secret but the one just made');
  }
});

offline('events commands refuse bad values with exit 2 naming the option, and change nothing', async () => {
  const id = (await cliJson(env, 'events', 'endpoints', 'add', 'https://localhost/bad-values')).endpoint.id;
  const countEndpoints = async (query: Query) => (await query('SELECT count(*)::int AS n FROM event_endpoints'))[0].n;
  const { before, endpointsBefore, mark } = await withSql(async (query) => ({
    before: await endpointRow(id, query),
    endpointsBefore: await countEndpoints(query),
    mark: (await query<{ mark: number }>('SELECT max(id)::int AS mark FROM audit_events'))[0].mark,
  }));
  const cases: Array<[string[], RegExp]> = [
    [['events', 'endpoints', 'add', 'hooks.example.com/no-scheme'], /<url>: must be an http or https URL/],
    [['events', 'endpoints', 'add', 'ftp://hooks.example.com/'], /<url>: must be an http or https URL/],
    [['events', 'endpoints', 'add', 'https://hooks.example.com/', '--events', 'account.created,account.exploded'], /--events: .*account\.created/],
    [['events', 'endpoints', 'add', 'https://hooks.example.com/', '--events', 'ping'], /--events: /],
    [['events', 'endpoints', 'add', 'https://ops:hunter2@localhost/in'], /<url>: must not hold credentials/],
    [['events', 'endpoints', 'add', 'http://169.254.169.254/latest/meta-data/'], /<url>: points at 169\.254\.169\.254, a link-local address/],
    [['events', 'endpoints', 'add', 'http://hooks.invalid/'], /<url>: has a host that does not resolve/],
    [['events', 'endpoints', 'update', id, '--url', 'http://10.0.0.1/'], /--url: points at 10\.0\.0\.1, a private address.*EVENTS_ALLOWED_NETWORKS/],
    [['events', 'endpoints', 'update', 'not-a-uuid', '--disable'], /<id>: must be an endpoint id/],
    [['events', 'endpoints', 'update', id, '--url', 'javascript:alert(1)'], /--url: must be an http or https URL/],
    [['events', 'endpoints', 'update', id, '--events', 'account.created,account.created'], /--events: must not name a type twice/],
    [['events', 'endpoints', 'update', id, '--description', 'x'.repeat(501)], /--description: /],
    [['events', 'endpoints', 'update', id], /say what to change/],
    [['events', 'endpoints', 'rotate', id, '--grace', '86401'], /--grace: .*86400/],
    [['events', 'endpoints', 'rotate', id, '--grace', '-1'], /--grace: /],
    [['events', 'endpoints', 'rotate', id, '--grace', 'an hour'], /--grace: /],
    [['events', 'endpoints', 'rotate', '12345'], /<id>: must be an endpoint id/],
    [['events', 'endpoints', 'remove', `${id}x`], /<id>: must be an endpoint id/],
    [['events', 'endpoints', 'test', 'x'], /<id>: must be an endpoint id/],
    [['events', 'deliveries', 'list', '--endpoint', 'nope'], /--endpoint: must be an endpoint id/],
    [['events', 'deliveries', 'list', '--state', 'failed'], /--state: .*skipped/],
    [['events', 'deliveries', 'list', '--type', 'account.exploded'], /--type: /],
    [['events', 'deliveries', 'list', '--limit', '201'], /--limit: .*200/],
    [['events', 'deliveries', 'show', 'nope'], /<id>: must be a delivery id/],
    [['events', 'deliveries', 'retry', 'nope'], /<id>: must be a delivery id/],
    [['events', 'deliveries', 'retry'], /give a delivery id, or --dead --endpoint <id>/],
    [['events', 'deliveries', 'retry', '--dead'], /--dead needs --endpoint <id>/],
    [['events', 'deliveries', 'retry', randomUUID(), '--dead'], /either a delivery id or --dead/],
    [['events', 'deliveries', 'retry', randomUUID(), '--endpoint', id], /--endpoint and --since choose/],
    [['events', 'deliveries', 'retry', '--dead', '--endpoint', 'nope'], /--endpoint: must be an endpoint id/],
    [['events', 'deliveries', 'retry', '--dead', '--endpoint', id, '--since', 'yesterday'], /--since: /],
  ];
  const runs = await Promise.all(cases.map(([args]) => cliInProcess(env, ...args, '--json')));
  runs.forEach((run, i) => {
    assert.is(run.code, 2, `${cases[i][0].join(' ')}: ${run.stderr}`);
    assert.is(run.stdout, '');
    assert.match(run.stderr, cases[i][1]);
  });
  await withSql(async (query) => {
    assert.equal(await endpointRow(id, query), before, 'the endpoint is as it was');
    assert.is(await countEndpoints(query), endpointsBefore, 'no endpoint was added');
    assert.equal(await query('SELECT event FROM audit_events WHERE id > $1', [mark]), [], 'and nothing was recorded');
  });
  assert.equal(await cliJson(env, 'events', 'endpoints', 'remove', id), { success: true });
});

offline('--json keeps stdout to one JSON document: the service log lines go to stderr', async () => {
  // RATE_LIMITS=off makes the services log a warning as they start.
  const run = await cliProcess({ ...env, RATE_LIMITS: 'off' }, 'inbox', 'stats', '--json');
  assert.is(run.code, 0, run.stderr);
  assert.is(JSON.parse(run.stdout).success, true);
  const logged = run.stderr.trim().split('\n').map((line) => JSON.parse(line));
  assert.ok(logged.some((line) => line.level === 'warn' && /RATE_LIMITS=off/.test(line.msg)), run.stderr);
});

offline('a database that cannot be reached exits 1 with one line naming DATABASE_URL and no stack trace', async () => {
  const unreachable = { ...env, DATABASE_URL: 'postgres://postgres:hunter2@127.0.0.1:1/gatehouse' };
  const commands = [['inbox', 'stats', '--json'], ['migrate', 'status'], ['promote', 'ops@example.com']];
  const runs: Array<[string[], CliRun]> = [];
  for (const args of commands) runs.push([args, await cliInProcess(unreachable, ...args)]);
  // The first as a process too: what an operator's terminal shows.
  runs.push([commands[0], await cliProcess(unreachable, ...commands[0])]);
  for (const [args, run] of runs) {
    assert.is(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
    assert.is(run.stdout, '');
    const lines = run.stderr.trim().split('\n');
    assert.is(lines.length, 1, run.stderr);
    assert.match(lines[0], /^error: cannot reach the database at DATABASE_URL \(127\.0\.0\.1:1\/gatehouse\): .*ECONNREFUSED/);
    assert.not.match(run.stderr, /hunter2/, 'no password');
    assert.not.match(run.stderr, /\bat .*\.(ts|js):\d+/, 'no stack');
  }
});

offline('a bad setting exits 1 with one line naming the variable', async () => {
  const run = await cliInProcess({ ...env, DATABASE_URL: 'mysql://nope' }, 'inbox', 'stats');
  assert.is(run.code, 1);
  assert.is(run.stdout, '');
  assert.match(run.stderr, /^error: invalid configuration: DATABASE_URL: must be a URL \(postgres: or postgresql:\)\n$/);
});

offline.run();

// ------------------------------------------------------------------ beside a running service

if (process.env.DATABASE_URL) {
  const live = suite('admin CLI beside a running service (PostgreSQL)');
  let service: TestService;
  let cliEnv: Record<string, string>;

  live.before(async () => {
    service = await startTestService();
    const { DATABASE_URL, DATA_DIR, JWT_SECRET, DATA_KEY } = service.env;
    cliEnv = { DATABASE_URL, DATA_DIR, JWT_SECRET, DATA_KEY };
  });

  live.after(async () => {
    await service?.close();
  });

  live('a promoted account may call the admin API at once; demoted, it is refused again', async () => {
    // Another admin, so that demoting this one does not leave none.
    await cliJson(cliEnv, 'promote', (await createAccount(service, 'operator.other')).email);
    const account = await createAccount(service, 'operator');
    const stats = () => request(service.url, 'GET', '/api/v1/admin/inbox/stats', { headers: { authorization: `Bearer ${account.token}` } });
    assert.is((await stats()).status, 403);
    assert.is((await cliJson(cliEnv, 'promote', account.email)).account.role, 'admin');
    const allowed = await eventually('the admin API to let the account in', async () => {
      const response = await stats();
      return response.status === 200 && response;
    });
    assert.equal(allowed.body.providers.map((p: any) => p.provider), [...PROVIDER_NAMES]);
    assert.is((await cliJson(cliEnv, 'demote', account.email)).account.role, 'user');
    await eventually('the admin API to refuse the account again', async () => (await stats()).status === 403);
  });

  live('sessions revoke signs a live session out on the running service at once, and mails its owner', async () => {
    const account = await createAccount(service, 'signedout');
    const me = () => request(service.url, 'GET', '/api/v1/auth/me', { headers: { authorization: `Bearer ${account.token}` } });
    assert.is((await me()).status, 200, 'in use (and cached) before');
    const seen = service.smtp.mailsTo(account.email).length;
    const { SMTP_URL, PUBLIC_URL } = service.env;
    const result = await cliJson({ ...cliEnv, SMTP_URL, PUBLIC_URL }, 'sessions', 'revoke', account.email);
    assert.equal(result, { success: true, account: { id: account.id, email: account.email }, revoked: 1 });
    await eventually('the running service to refuse the session', async () => (await me()).status === 401);
    const notice = await nextMail(service, account.email, seen, /administrator signed your Gatehouse account out everywhere/);
    assert.match(notice.text, `${PUBLIC_URL}/login`);
  });

  live('a replayed dead delivery is applied by the running worker: an event for an unknown account ends ignored', async () => {
    const id = randomUUID();
    const event = paddleEvent({
      eventType: 'subscription.created',
      occurredAt: new Date(),
      data: { id: 'sub_cli', status: 'active', custom_data: { account_id: '999999999' }, items: [{ price: { id: 'pri_cli' } }] },
    });
    await service.deps.db.query(
      `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at, state, attempts, last_error, processed_at)
       VALUES ($1, 'billing', '', $2, $3, $4, 'dead', 8, 'Error: gone', $4)`,
      [id, event.event_id, Buffer.from(JSON.stringify(event)), service.clock.now()],
    );
    assert.equal(await cliJson(cliEnv, 'inbox', 'replay', id), { success: true });
    const row = await eventually('the worker to apply the replayed delivery', async () => {
      const [found] = await service.deps.db.query<{ state: string; reason: string | null }>('SELECT state, reason FROM webhook_inbox WHERE id = $1', [id]);
      return found.state !== 'received' && found.state !== 'dead' && found;
    });
    assert.equal(row, { state: 'ignored', reason: 'unknown account 999999999' });
  });

  live('events endpoints test sends a signed ping through the running worker; deliveries list, show and retry follow it', async () => {
    const receiver = await EventReceiver.start();
    const db = service.deps.db;
    const stateOf = async (id: string) => (await db.query<{ state: string }>('SELECT state FROM event_deliveries WHERE id = $1', [id]))[0]?.state;
    /** The CLI stamps what it queues with the real time; the service's test clock is moved there, so that it is due. */
    const catchUp = () => service.clock.set(new Date());
    const receivedIds = (count: number, what: string) => eventually(what, () => (receiver.delivered().length >= count ? receiver.delivered().map((body) => body.id) : undefined));
    try {
      const added = await cliJson(cliEnv, 'events', 'endpoints', 'add', receiver.url, '--events', 'security.changed', '--description', 'cli receiver');
      const endpointId = added.endpoint.id;
      const rotated = await cliJson(cliEnv, 'events', 'endpoints', 'rotate', endpointId, '--grace', '600');
      receiver.secrets = [rotated.secret];

      const tested = await cliJson(cliEnv, 'events', 'endpoints', 'test', endpointId);
      assert.equal(Object.keys(tested).sort(), ['delivery_id', 'success']);
      catchUp();
      const [pingId] = await receivedIds(1, 'the worker to send the ping');
      const request = receiver.received[0];
      assert.equal(request.verified, { type: 'ping', timestamp: (request.verified as any).timestamp, data: {} });
      assert.is(request.headers['webhook-signature'].split(' ').length, 2, 'the old and the new secret both sign during the grace');
      assert.equal(new Webhook(added.secret).verify(request.body, request.headers), request.verified, 'the old secret still verifies');
      await eventually('the delivery recorded as delivered', async () => (await stateOf(tested.delivery_id)) === 'delivered');

      const shown = await cliJson(cliEnv, 'events', 'deliveries', 'show', tested.delivery_id);
      assert.equal({ ...shown.delivery, created_at: undefined, attempts_log: undefined }, {
        id: tested.delivery_id, endpoint_id: endpointId, event_id: pingId, type: 'ping', state: 'delivered', attempts: 1,
        last_status: 200, last_error: null, next_attempt_at: null, created_at: undefined, body: request.body, attempts_log: undefined,
      });
      assert.equal(shown.delivery.attempts_log.map((attempt: any) => [attempt.status, attempt.error]), [[200, null]]);
      const human = await cliInProcess(cliEnv, 'events', 'deliveries', 'show', tested.delivery_id);
      assert.is(human.code, 0, human.stderr);
      assert.match(human.stdout, new RegExp(`^id:\\s+${tested.delivery_id}\\nendpoint:\\s+${endpointId}\\nevent id:\\s+${pingId}\\ntype:\\s+ping\\nstate:\\s+delivered\\n`));
      assert.match(human.stdout, /\nattempts log:\n\s+at\s+status\s+ms\s+error\n\s+\S+\s+200\s+\d+\s+-\n/);
      assert.ok(human.stdout.endsWith(`body:\n${request.body}\n`));

      const listed = await cliJson(cliEnv, 'events', 'deliveries', 'list', '--endpoint', endpointId);
      assert.equal(listed.items.map((item: any) => item.id), [tested.delivery_id]);
      assert.equal((await cliJson(cliEnv, 'events', 'deliveries', 'list', '--endpoint', endpointId, '--state', 'delivered', '--type', 'ping', '--limit', '1')).items.length, 1);
      assert.equal((await cliJson(cliEnv, 'events', 'deliveries', 'list', '--endpoint', endpointId, '--state', 'dead')).items, []);
      const table = await cliInProcess(cliEnv, 'events', 'deliveries', 'list', '--endpoint', endpointId);
      assert.match(table.stdout, new RegExp(`${tested.delivery_id}\\s+${endpointId}\\s+ping\\s+delivered\\s+1\\s+200\\s+-\\n`));

      assert.equal(await cliJson(cliEnv, 'events', 'deliveries', 'retry', tested.delivery_id), { success: true });
      assert.is(await stateOf(tested.delivery_id), 'pending');
      catchUp();
      assert.equal(await receivedIds(2, 'the retried ping sent again'), [pingId, pingId], 'the same event id on every attempt');

      // A second ping waits (the service's clock is behind it) while the endpoint is disabled: it is kept as skipped.
      const waiting = await cliJson(cliEnv, 'events', 'endpoints', 'test', endpointId);
      await cliJson(cliEnv, 'events', 'endpoints', 'update', endpointId, '--disable');
      assert.is(await stateOf(waiting.delivery_id), 'skipped');
      await refused(cliEnv, 2, ['events', 'endpoints', 'test', endpointId], /endpoint is disabled.*--enable/);
      await refused(cliEnv, 2, ['events', 'deliveries', 'retry', '--dead', '--endpoint', endpointId], /endpoint is disabled/);
      await refused(cliEnv, 2, ['events', 'deliveries', 'retry', waiting.delivery_id], /endpoint is disabled/);
      assert.is(await stateOf(waiting.delivery_id), 'skipped', 'a refused retry changes nothing');
      await cliJson(cliEnv, 'events', 'endpoints', 'update', endpointId, '--enable');
      const later = new Date(Date.now() + 3_600_000).toISOString();
      assert.equal(await cliJson(cliEnv, 'events', 'deliveries', 'retry', '--dead', '--endpoint', endpointId, '--since', later), { success: true, retried: 0 });
      const bulk = await cliInProcess(cliEnv, 'events', 'deliveries', 'retry', '--dead', '--endpoint', endpointId);
      assert.is(bulk.code, 0, bulk.stderr);
      assert.match(bulk.stdout, new RegExp(`^Queued 1 dead and skipped deliveries of endpoint ${endpointId} again`));
      catchUp();
      const [, , skippedId] = await receivedIds(3, 'the skipped ping sent once retried');
      assert.is.not(skippedId, pingId);
      assert.equal(receiver.received.filter((r) => r.error).map((r) => r.error), [], 'every request verified');

      assert.equal(await cliJson(cliEnv, 'events', 'endpoints', 'remove', endpointId), { success: true });
      const [left] = await db.query<{ endpoints: number; deliveries: number }>(
        'SELECT (SELECT count(*)::int FROM event_endpoints WHERE id = $1) AS endpoints, (SELECT count(*)::int FROM event_deliveries WHERE endpoint_id = $1) AS deliveries',
        [endpointId],
      );
      assert.equal(left, { endpoints: 0, deliveries: 0 });
    } finally {
      await receiver.close();
    }
  });

  live.run();
}
