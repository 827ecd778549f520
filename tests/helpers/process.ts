import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export type ServiceProcess = {
  child: ChildProcess;
  /** stdout and stderr as they came. */
  output: () => string;
  /** stderr alone: where a failed start writes its one line. */
  errors: () => string;
  exited: Promise<number | null>;
};

export type SpawnOptions = {
  /** In a process group of its own, so `process.kill(-child.pid, signal)` reaches all of it, as a supervisor's kill would. */
  detached?: boolean;
  /** A file descriptor for its stdout instead of a pipe read into `output()` (which then holds stderr alone). */
  stdout?: number;
};

/**
 * Set by tests/run.mjs: the run's one build of the service (`npm run build`'s output), so that
 * process suites start what the image runs, in a second rather than the two and a half a
 * TypeScript start takes, and no suite builds its own copy.
 */
const RUN_BUILD = process.env.GATEHOUSE_TEST_BUILD;

/**
 * The service as a real child process, as an operator runs it: the run's build with `node`
 * when there is one, else `npm start`'s TypeScript entry point (a file run on its own).
 */
export function spawnService(env: Record<string, string>, role: 'all' | 'gateway' | 'worker' = 'all', options: SpawnOptions = {}): ServiceProcess {
  if (RUN_BUILD) return spawnBuilt(join(RUN_BUILD, 'main.js'), [`--role=${role}`], env, options);
  return spawnScript('gateway/src/main.ts', [`--role=${role}`], env, options);
}

/** One of the project's TypeScript entry points (as its npm script runs it) as a child process. */
export function spawnScript(entry: string, args: string[], env: Record<string, string>, options: SpawnOptions = {}): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', options.stdout ?? 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  return watch(child);
}

function watch(child: ChildProcess): ServiceProcess {
  let output = '';
  let errors = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => {
    output += chunk;
    errors += chunk;
  });
  // 'close', not 'exit': by then everything the process wrote has been read.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => output, errors: () => errors, exited };
}

/**
 * Ends `service` if it still runs and waits until it has: for a test's `finally`, so that a
 * failed assertion leaves no service behind (tests/run.mjs fails a file that does). SIGKILL,
 * or its whole process group for one started `detached`; a stop that is itself under test
 * sends its own signal first.
 */
export async function stopService(service: ServiceProcess | undefined, options: { group?: boolean } = {}): Promise<void> {
  if (!service || service.child.exitCode !== null || service.child.signalCode !== null) return;
  try {
    if (options.group) process.kill(-service.child.pid!, 'SIGKILL');
    else service.child.kill('SIGKILL');
  } catch {
    // ended meanwhile
  }
  await service.exited;
}

/**
 * Stops `service` as an operator does (SIGTERM) and resolves with its exit code; one that has
 * not exited within the deadline is killed, so that nothing outlives the test.
 */
export async function terminate(service: ServiceProcess): Promise<number | null> {
  service.child.kill('SIGTERM');
  try {
    return await exitWithin(service);
  } finally {
    await stopService(service);
  }
}

/** How long a process may take to exit when a test expects it to, on a loaded machine. */
const EXIT_DEADLINE_MS = 120_000;

/** The process's exit code, or a failure naming what it wrote if it has not exited within `deadlineMs`. */
export async function exitWithin(service: ServiceProcess, deadlineMs = EXIT_DEADLINE_MS): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the process did not exit within ${deadlineMs / 1000} s:\n${service.output()}`)), deadlineMs);
  });
  try {
    return await Promise.race([service.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `npm run build`'s output: the run's build, or one built afresh from the current sources
 * into a directory of the test's own (so test files never race over dist/), removed by `remove`.
 */
export async function buildService(): Promise<{ dir: string; remove(): void }> {
  // The run's build is the run's to remove.
  if (RUN_BUILD) return { dir: RUN_BUILD, remove: () => undefined };
  const dir = join(root, '.build', `${process.pid}-${randomBytes(4).toString('hex')}`);
  const built = spawnSync(process.execPath, ['build.mjs', `--outdir=${dir}`], { cwd: root, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`the build failed:\n${built.stdout}${built.stderr}`);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A built entry point run exactly as the image's CMD runs it: `node <file>`, no npm, no tsx. */
export function spawnBuilt(file: string, args: string[], env: Record<string, string>, options: SpawnOptions = {}): ServiceProcess {
  return watch(
    spawn(process.execPath, [file, ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', options.stdout ?? 'pipe', 'pipe'],
      detached: options.detached ?? false,
    }),
  );
}

/**
 * Polls `url` until the process answers it with a 200, the process exits, or the time is up.
 * Where Linux shows who listens on a port (`/proc`), a 200 counts only once the listening
 * socket is the process's own: another test's server given the same port a moment earlier
 * would otherwise pass for this one.
 */
export async function waitUntilReady(url: string, service: ServiceProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const port = Number(new URL(url).port);
  let exited = false;
  service.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok && listensOn(service.child.pid!, port) !== false) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`service not ready at ${url}:\n${service.output()}`);
}

/**
 * Whether `pid` holds the socket listening on `port`, from the kernel's socket tables and
 * the process's descriptors; undefined where there is no `/proc` to tell.
 */
export function listensOn(pid: number, port: number): boolean | undefined {
  return listeningPorts(pid)?.includes(port);
}

/**
 * The TCP ports `pid` listens on (IPv4 and IPv6), from the kernel's socket tables and the
 * process's descriptors: none once it is gone; undefined where there is no `/proc` to tell.
 */
export function listeningPorts(pid: number): number[] | undefined {
  let tables: string;
  try {
    tables = readFileSync('/proc/net/tcp', 'utf8') + readFileSync('/proc/net/tcp6', 'utf8');
  } catch {
    return undefined;
  }
  const LISTEN = '0A';
  const portOfSocket = new Map<string, number>();
  for (const line of tables.split('\n')) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const fields = line.trim().split(/\s+/);
    if (fields[3] === LISTEN) portOfSocket.set(`socket:[${fields[9]}]`, parseInt(fields[1].split(':')[1], 16));
  }
  try {
    const ports = readdirSync(`/proc/${pid}/fd`).map((fd) => portOfSocket.get(readlinkOrEmpty(`/proc/${pid}/fd/${fd}`)));
    return [...new Set(ports.filter((port): port is number => port !== undefined))];
  } catch {
    return []; // the process is gone
  }
}

function readlinkOrEmpty(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return ''; // closed since the directory was read
  }
}
