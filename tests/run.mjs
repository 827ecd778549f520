// Runs every tests/**/*.test.ts (each file with a fresh service and database of its own), a
// few at a time in warm processes, and closes with the line CI reads: "N passed, N failed".
// After each file it checks that the file left nothing behind (helpers/leaks.mjs).
//
//   node tests/run.mjs [--database-scope] [<substring of a path>...]
//
// GATEHOUSE_TEST_BUILD=<dir> gives the process suites a build made beforehand (.ci/run's
// dist/) instead of one made for the run.
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, relative, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanUp, describeLeaks, descendants, killAll, settledLeaks, snapshot } from './helpers/leaks.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const filter = args.filter((arg) => !arg.startsWith('--'));
const databaseScope = args.includes('--database-scope') || Boolean(process.env.TEST_DATABASE_SCOPE);
// Where the test files are: tests/, or (for the harness's own tests) a directory of fixtures.
const testsDir = process.env.GATEHOUSE_TEST_DIR ?? join(root, 'tests');

/**
 * `--database-scope` (or TEST_DATABASE_SCOPE=1) runs only the files in which the kind of
 * database changes what is tested: .ci/run's second pass, on the embedded database (PGlite),
 * uses it. The other files reach the database through the same SQL whichever serves it, and
 * the first pass already ran them on PostgreSQL. The scope:
 * - every *.db.test.ts: they test SQL, locks, leases and storage directly (but the autovacuum
 *   check's, a database server's setting that the embedded database is not checked for);
 * - the process files that start a service on the database of the run: the lifecycle
 *   (start, drain, stop with the database's files closed), and the two crash files, where
 *   what a SIGKILL leaves in the database's files must recover exactly once;
 * - the REST journeys every user takes (register, verify, log in), end to end once on it.
 * Files that always use the embedded database (the CLI beside a running service, the
 * supervisor's crash-restart) ran on it in the first pass already, and so did the failed
 * starts: those of the embedded database's own (a locked or unreadable DATA_DIR) start on one
 * whatever the run's is, and the one that reads the database (a DATA_KEY that opens nothing)
 * tries both.
 */
const DATABASE_SCOPE = [
  /\.db\.test\.ts$/,
  /ops\.lifecycle\.process\./,
  /events\.crash\.process\./,
  /webhooks\.crash\.process\./,
  /auth\.(register|verify|login)\.rest\./,
];
const OUTSIDE_DATABASE_SCOPE = /ops\.autovacuum\.db\./;

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'helpers' ? [] : findTests(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const files = findTests(testsDir)
  .filter((file) => !filter.length || filter.some((f) => file.includes(f)))
  .filter((file) => !databaseScope || (DATABASE_SCOPE.some((pattern) => pattern.test(file)) && !OUTSIDE_DATABASE_SCOPE.test(file)))
  .sort();

// TEST_ORDER=reverse runs each file's tests last to first: no test may need another's leftovers.
const orderImport = process.env.TEST_ORDER === 'reverse' ? ['--import', './tests/helpers/reverse-order.mjs'] : [];
// After orderImport, so that it resolves 'uvu' first: an error a `before` hook throws is printed (uvu-loud.mjs).
const LOUD_HOOKS = ['--import', './tests/helpers/uvu-loud-hooks.mjs'];

// TEST_CPU_PROF=<dir> writes a CPU profile of every test process (and of its threads) there.
const cpuProf = process.env.TEST_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.TEST_CPU_PROF}`] : [];

const stripAnsi = (text) => text.replace(/\x1b\[[0-9;]*m/g, '');
const count = (text, label) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(text)?.[1] ?? NaN);

/**
 * One database migrated for the whole run (helpers/database.ts): suites that start a service
 * copy it rather than each migrating its own. Its name or directory goes to every test
 * process; `remove()` drops it at the end.
 */
async function prepareMigratedTemplate() {
  const script = `const { prepareMigratedTemplate } = await import('./tests/helpers/database.ts');
    const { template, remove } = await prepareMigratedTemplate();
    process.stdout.write(template);
    await new Promise((resolve) => process.stdin.once('data', resolve).once('end', resolve));
    await remove();`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
  let template = '';
  child.stdout.on('data', (chunk) => (template += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise((resolve, reject) => {
    child.stdout.once('data', () => setImmediate(resolve));
    child.once('exit', () => reject(new Error('could not prepare the migrated test database')));
  });
  return {
    template,
    async remove() {
      child.stdin.end('done');
      await exited;
    },
  };
}

/**
 * One build of the service for the run's process suites (helpers/process.ts), in a directory
 * of its own inside the repository (the build's external packages resolve from node_modules).
 */
async function prepareBuild() {
  if (!files.some((file) => file.includes('.process.'))) return undefined;
  // One its caller made for it (.ci/run builds dist/ before the suite): used as it is, and kept.
  if (process.env.GATEHOUSE_TEST_BUILD) return { dir: resolvePath(process.env.GATEHOUSE_TEST_BUILD), remove: () => undefined };
  const dir = join(root, '.build', `run-${process.pid}`);
  const child = spawn(process.execPath, ['build.mjs', `--outdir=${dir}`], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`the build failed:\n${output}`);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Free space /dev/shm must have for a run's scratch files. */
const SCRATCH_MIN_FREE = 2 * 1024 ** 3;

/**
 * The run's scratch directory: in memory where the machine offers it (/dev/shm) unless TMPDIR
 * is set, else in TMPDIR. Every suite on the embedded database copies a data directory (39 MB
 * in about a thousand files) and removes it again, about ten times faster on tmpfs than on a
 * disk's file system, and PGlite writes its files there. Each test process gets a directory
 * of its own inside it as TMPDIR (what it starts inherits it), so that what a file leaves
 * there is known to be that file's; what the run shares (the embedded template) sits at its
 * top. The directory goes at the end of the run, with those of earlier runs that were killed.
 */
function prepareScratch() {
  const base = process.env.TMPDIR || !inMemory() ? tmpdir() : '/dev/shm';
  for (const name of readdirSync(base)) {
    const pid = Number(/^gatehouse-tests-(\d+)$/.exec(name)?.[1]);
    if (pid && !isAlive(pid)) rmSync(join(base, name), { recursive: true, force: true });
  }
  const dir = join(base, `gatehouse-tests-${process.pid}`);
  mkdirSync(dir, { mode: 0o700 });
  process.env.TMPDIR = dir;
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Whether /dev/shm can take a run's scratch files. */
function inMemory() {
  const shm = '/dev/shm';
  if (!existsSync(shm)) return false;
  try {
    accessSync(shm, constants.W_OK);
    // A container's /dev/shm is often 64 MB: an embedded run held 440 MB at its peak here.
    const { bavail, bsize } = statfsSync(shm);
    return bavail * bsize >= SCRATCH_MIN_FREE;
  } catch {
    return false;
  }
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

const FILE_TIMEOUT_MS = 600_000; // generous: on the embedded database a file may take minutes
/**
 * How long a file's leftovers may take to go (a close or an exit it did not await) before they
 * count as leaks: generous, since a loaded machine is slow to end processes; paid only by a
 * file that leaves something. TEST_LEAK_GRACE_MS shortens it for the harness's own fixtures.
 */
const LEAK_GRACE_MS = Number(process.env.TEST_LEAK_GRACE_MS ?? 10_000);
/**
 * Files at a time: CONCURRENCY_PER_CORE per core the machine gives this process, or
 * TEST_CONCURRENCY. The whole suite on PostgreSQL, on two cores, one run each in one checkout
 * (2026-12-02, most files reaching their service in process): 315 s two at a time, 265 s
 * three, 254 s four. Files wait on their database, mail and timers as much as on a core, so a
 * half more than the cores keeps them busy; beyond that the gain is small, and a machine that
 * runs other work beside the suite has fewer cores to spare than it counts.
 */
const CONCURRENCY_PER_CORE = 1.5;
const concurrency = Number(process.env.TEST_CONCURRENCY ?? Math.max(1, Math.round(CONCURRENCY_PER_CORE * availableParallelism())));

function resultOf(file, code, text, started) {
  const clean = stripAnsi(text);
  const total = count(clean, 'Total');
  const passed = count(clean, 'Passed');
  const skipped = count(clean, 'Skipped') || 0;
  const finished = Number.isFinite(total) && Number.isFinite(passed);
  const failed = finished ? total - passed - skipped : 1;
  return { file, text: clean, passed: finished ? passed : 0, failed: code !== 0 && failed === 0 ? 1 : failed, skipped, ms: Date.now() - started };
}

/**
 * A warm process (helpers/file-runner.mjs) that runs the files it is given one after another.
 * `run(file)` settles with the file's result; a crash or a hang fails that file and ends the
 * process, and the pool starts a new one for the next file.
 */
function startRunner(slot) {
  const scratchDir = join(scratch.dir, `process-${slot}`);
  mkdirSync(scratchDir, { recursive: true });
  const child = spawn(process.execPath, [...cpuProf, '--import', 'tsx', ...orderImport, ...LOUD_HOOKS, join(root, 'tests/helpers/file-runner.mjs')], {
    cwd: root,
    env: {
      ...process.env,
      FORCE_COLOR: '0',
      TMPDIR: scratchDir,
      GATEHOUSE_TEST_SHARED_DIR: scratch.dir,
      ...(migrated ? { GATEHOUSE_TEST_MIGRATED_TEMPLATE: migrated.template } : {}),
      // Each concurrent runner draws service ports from a share of its own (helpers/service.ts, freePort).
      GATEHOUSE_TEST_PORT_SLOT: `${slot}/${concurrency}`,
      ...(build ? { GATEHOUSE_TEST_BUILD: build.dir } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // What the process writes outside a file's run (a crash's stack) belongs to the file in hand.
  let stray = '';
  child.stdout.on('data', (chunk) => (stray += chunk));
  child.stderr.on('data', (chunk) => (stray += chunk));
  const ready = new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', () => reject(new Error(`the test process could not start:\n${stray}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    ready,
    pid: child.pid,
    scratchDir,
    alive: () => child.exitCode === null && child.signalCode === null,
    run(file) {
      const started = Date.now();
      stray = '';
      return new Promise((resolve) => {
        const settle = (code, text) => {
          clearTimeout(timer);
          child.off('message', onMessage);
          child.off('exit', onExit);
          resolve(resultOf(file, code, text, started));
        };
        const onMessage = (message) => settle(message.code, stray + message.text);
        const onExit = (code, signal) => settle(code ?? 1, `${stray}\nthe test process ended (${signal ?? `exit code ${code}`}) before the file finished`);
        const timer = setTimeout(() => {
          // What it started first: once it is gone they belong to no one the check can see.
          killAll(descendants(child.pid).keys());
          child.kill('SIGKILL');
          settle(1, `${stray}\nthe file did not finish within ${FILE_TIMEOUT_MS / 1000} s`);
        }, FILE_TIMEOUT_MS);
        child.on('message', onMessage);
        child.once('exit', onExit);
        child.send({ file });
      });
    },
    /** Lets the process end by itself (files' exit handlers run), or kills it after a while. */
    async stop() {
      if (!this.alive()) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ stop: true });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
    /** Ends the process now: the one way to close the ports it still listens on. */
    async kill() {
      if (!this.alive()) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * Fails `result` if its file left a process, a listening port or a scratch entry behind, and
 * clears them away so that the next file does not inherit them: processes are killed, entries
 * removed, and a test process still listening is replaced by a fresh one.
 */
async function checkLeftovers(runner, before, result) {
  const leaks = await settledLeaks(before, runner.pid, runner.scratchDir, LEAK_GRACE_MS);
  if (!leaks.any) return;
  result.failed += 1;
  result.text += `\nthe file left behind (cleared away by the runner):\n${describeLeaks(leaks).map((leak) => `  ${leak}`).join('\n')}\n`;
  cleanUp(leaks, runner.scratchDir);
  if (leaks.ports.length) await runner.kill();
}

/**
 * The longest files go first, so the run does not end waiting on one of them: how long each
 * took the last time it ran (on this kind of database, else on the other), kept in
 * node_modules/.cache; in a clone that has not run them yet, as long as they took on one
 * machine (tests/durations.json: copy the cache's file over it when files come or change
 * much); a file in neither is guessed by its kind (whole-process suites spawn services,
 * browser suites a browser) and its size.
 */
const DURATIONS = join(root, 'node_modules', '.cache', 'gatehouse-tests', 'durations.json');
const COMMITTED_DURATIONS = join(root, 'tests', 'durations.json');
const [databaseKind, otherKind] = process.env.DATABASE_URL ? ['postgresql', 'embedded'] : ['embedded', 'postgresql'];

function readDurations(path = DURATIONS) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return {};
  }
}

function saveDurations(results) {
  const all = readDurations();
  const mine = (all[databaseKind] ??= {});
  for (const result of results) mine[relative(root, result.file)] = result.ms;
  mkdirSync(dirname(DURATIONS), { recursive: true });
  writeFileSync(DURATIONS, JSON.stringify(all, null, 2));
}

const known = readDurations();
const committed = readDurations(COMMITTED_DURATIONS);
// Measured here: about half a millisecond of run per byte of an HTTP or database suite.
const guess = (file) => (file.includes('.process.') ? 30_000 : file.includes('.browser.') ? 10_000 : statSync(file).size / 2);
const expected = new Map(
  files.map((file) => {
    const name = relative(root, file);
    return [file, known[databaseKind]?.[name] ?? committed[databaseKind]?.[name] ?? known[otherKind]?.[name] ?? guess(file)];
  }),
);
const queue = [...files].sort((a, b) => expected.get(b) - expected.get(a) || a.localeCompare(b));

const scratch = prepareScratch();
// The harness's fixtures (GATEHOUSE_TEST_DIR) use no database.
const [migrated, build] = await Promise.all([process.env.GATEHOUSE_TEST_DIR ? undefined : prepareMigratedTemplate(), prepareBuild()]);
console.log(`running ${files.length} test files on ${process.env.DATABASE_URL ? 'PostgreSQL at DATABASE_URL' : 'the embedded database'}, ${concurrency} at a time`);
const results = [];
const runStarted = Date.now();
const workers = Array.from({ length: Math.min(concurrency, queue.length) }, async (_, slot) => {
  let runner;
  try {
    while (queue.length) {
      // Taken before any wait: another worker may take the last file while this one's runner starts.
      const file = queue.shift();
      if (!runner?.alive()) {
        runner = startRunner(slot);
        await runner.ready;
      }
      const before = snapshot(runner.pid, runner.scratchDir);
      const result = await runner.run(file);
      await checkLeftovers(runner, before, result);
      results.push(result);
      const name = relative(root, result.file);
      console.log(`${result.failed ? 'FAIL' : 'ok  '} ${name}  (${result.passed} passed, ${result.failed} failed, ${(result.ms / 1000).toFixed(1)} s)`);
      if (result.failed || result.skipped) console.log(result.text.split('\n').map((line) => `    ${line}`).join('\n'));
    }
  } finally {
    await runner?.stop();
  }
});
await Promise.all(workers);
await migrated?.remove();
build?.remove();
// A directory of fixtures (the harness's own tests) has no durations worth keeping.
if (!process.env.GATEHOUSE_TEST_DIR) saveDurations(results);
scratch.remove();

console.log(`${results.length} files in ${((Date.now() - runStarted) / 1000).toFixed(0)} s`);
const passed = results.reduce((sum, r) => sum + r.passed, 0);
const failed = results.reduce((sum, r) => sum + r.failed, 0);
const skipped = results.reduce((sum, r) => sum + r.skipped, 0);
console.log(skipped ? `${passed} passed, ${failed} failed, ${skipped} skipped` : `${passed} passed, ${failed} failed`);
process.exit(failed || !files.length ? 1 : 0);
