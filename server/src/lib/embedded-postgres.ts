import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import lockfile from 'proper-lockfile';
import { makeDataDirPrivate } from './data-dir.ts';
import type { Logger } from './logger.ts';

/** How often files PGlite made since the last sweep lose their group and other bits. */
const PRIVACY_SWEEP_MS = 60_000;

/**
 * The lock is renewed this often, and one not renewed for LOCK_STALE_MS is a dead process's.
 * A process that died on this machine is recognised sooner, by the owner file written beside
 * the lock: its pid is gone, or it is our own pid (a container restarted: every incarnation
 * is pid 1 under the same hostname). Anything else (another container sharing the volume)
 * waits for the lock to go stale.
 */
const LOCK_UPDATE_MS = 2_000;
const LOCK_STALE_MS = 10_000;

/**
 * A process killed outright stays visible for a moment while the kernel tears its memory
 * down (about 1.5 s measured for a SIGKILLed service on the embedded database), so a
 * supervisor that restarts at once would be refused. An owner on this machine gets this long
 * to be gone before the start is refused; bounded, as one that stays is a real second process.
 */
export const OWNER_EXIT_WAIT_MS = 5_000;
const OWNER_POLL_MS = 100;
const TAKEN_OVER = 'DATA_DIR was locked by a process that is gone; taking the lock over';

/**
 * PGlite could not open the data in DATA_DIR: its files damaged (a process killed while it
 * wrote them, a full disk) or written by another PostgreSQL version.
 */
export class EmbeddedDatabaseUnreadable extends Error {
  constructor(
    readonly directory: string,
    cause: unknown,
  ) {
    super(`the embedded database in ${directory} could not be opened (${cause instanceof Error ? cause.message : String(cause)})`, { cause });
    this.name = 'EmbeddedDatabaseUnreadable';
  }
}

type LockOwner = { pid: number; hostname: string };
type Release = () => Promise<void>;

/** Two processes on one DATA_DIR would corrupt it (docs/CONFIGURATION.md, DATA_DIR). */
export class DataDirInUse extends Error {
  constructor(readonly dataDir: string) {
    super(`DATA_DIR ${dataDir} is in use by another Gatehouse process (the embedded database serves one process at a time)`);
    this.name = 'DataDirInUse';
  }
}

async function lockDataDir(dataDir: string, logger: Logger): Promise<Release> {
  const lockPath = join(dataDir, 'gatehouse.lock');
  const ownerPath = `${lockPath}.owner`;
  const lock = () =>
    lockfile.lock(dataDir, {
      lockfilePath: lockPath,
      realpath: false,
      retries: 0,
      update: LOCK_UPDATE_MS,
      stale: LOCK_STALE_MS,
      // The library throws from a timer by default, taking the process down mid-request.
      onCompromised: (error) => logger.error({ err: error }, 'the DATA_DIR lock was lost: another process may be opening this DATA_DIR'),
    });
  const release = await acquire(dataDir, lock, ownerPath, logger);
  writeFileSync(ownerPath, JSON.stringify({ pid: process.pid, hostname: hostname() } satisfies LockOwner), { mode: 0o600 });
  return async () => {
    rmSync(ownerPath, { force: true });
    await release();
  };
}

/**
 * Takes the lock, or takes it over from an owner that is gone. An owner on this machine that
 * is still there is given OWNER_EXIT_WAIT_MS to go; an unknown one or one on another host is
 * refused at once (it may be alive: only staleness tells).
 */
async function acquire(dataDir: string, lock: () => Promise<Release>, ownerPath: string, logger: Logger): Promise<Release> {
  const deadline = Date.now() + OWNER_EXIT_WAIT_MS;
  // A release removes the owner file, so one found here is a process's that never released.
  const leftBehind = readOwner(ownerPath);
  for (let waiting = false; ; waiting = true) {
    const release = await lockUnlessHeld(lock);
    if (release) {
      // Its lock went stale first (unrenewed for LOCK_STALE_MS), and the library took it over
      // without a word: said as when the lock was still fresh, so a crash is always in the log.
      if (!waiting && leftBehind && ownerState(leftBehind) === 'gone') logger.warn({ pid: leftBehind.pid }, TAKEN_OVER);
      return release;
    }
    const owner = readOwner(ownerPath);
    const state = ownerState(owner);
    if (state === 'gone') return takeOver(dataDir, lock, owner!.pid, logger);
    // Once waiting, an owner file missing or changed is a release or takeover in progress.
    if (state === 'elsewhere' && !waiting) throw new DataDirInUse(dataDir);
    if (Date.now() >= deadline) throw new DataDirInUse(dataDir);
    if (!waiting) logger.warn({ pid: owner?.pid }, `DATA_DIR is locked by a process on this machine; waiting up to ${OWNER_EXIT_WAIT_MS / 1000} s for it to exit`);
    await new Promise((resolve) => setTimeout(resolve, OWNER_POLL_MS));
  }
}

/** The lock's release, or undefined while another process holds it. */
async function lockUnlessHeld(lock: () => Promise<Release>): Promise<Release | undefined> {
  try {
    return await lock();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') return undefined;
    throw error;
  }
}

async function takeOver(dataDir: string, lock: () => Promise<Release>, pid: number, logger: Logger): Promise<Release> {
  logger.warn({ pid }, TAKEN_OVER);
  rmSync(join(dataDir, 'gatehouse.lock'), { recursive: true, force: true });
  const release = await lockUnlessHeld(lock);
  if (!release) throw new DataDirInUse(dataDir);
  return release;
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8'));
    return Number.isSafeInteger(owner?.pid) && typeof owner?.hostname === 'string' ? owner : undefined;
  } catch {
    return undefined;
  }
}

function ownerState(owner: LockOwner | undefined): 'gone' | 'running' | 'elsewhere' {
  if (!owner || owner.hostname !== hostname()) return 'elsewhere';
  // A container restarted: every incarnation is pid 1 under the same hostname.
  if (owner.pid === process.pid) return 'gone';
  return isGone(owner.pid) ? 'gone' : 'running';
}

function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return isDead(pid);
}

/** A zombie (Z) or dead (X) process still answers kill(pid, 0) until its parent reaps it. */
function isDead(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    // No /proc (macOS), or it is gone this instant: kill(pid, 0) decides on the next look.
    return false;
  }
  // "pid (command) state ...": the command may itself hold spaces and parentheses.
  const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
  return state === 'Z' || state === 'X';
}

export type EmbeddedPostgres = { url: string; stop(): Promise<void> };

/**
 * PGlite's own start parameters, with a 16 MB buffer pool instead of PostgreSQL's 128 MB:
 * PGlite zero-fills the pool in WebAssembly memory at every opening, which cost about 0.2 s
 * of CPU per start (a service, an `admin` command) at 128 MB and nothing measurable at
 * 16 MB. One process's database is small, and pages outside the pool are read from the
 * operating system's file cache. Given on the command line, it wins over postgresql.conf.
 */
export const EMBEDDED_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

/**
 * PGlite behind a loopback socket, so the same pg driver, Sequelize and pg-boss code runs
 * on it as on a real server. It has one backend: callers must keep to one connection.
 */
export async function startEmbeddedPostgres(dataDir: string, logger: Logger): Promise<EmbeddedPostgres> {
  const directory = resolve(join(dataDir, 'pgdata'));
  // PGlite.create does not create parent folders.
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const unlock = await lockDataDir(dataDir, logger);
  // PGlite's own lock file names no process (its pid is always -42) and guards nothing the
  // DATA_DIR lock above does not. One left empty or half written by a process killed while it
  // wrote it would refuse every later start ("PGlite failed to initialize properly") until
  // someone deleted it by hand; this process holds DATA_DIR now, so it can only be stale.
  rmSync(join(directory, 'postmaster.pid'), { force: true });
  const started = Date.now();
  let db: PGlite;
  try {
    db = await PGlite.create(directory, { startParams: EMBEDDED_START_PARAMS }).catch((error: unknown) => {
      throw new EmbeddedDatabaseUnreadable(directory, error);
    });
    makeDataDirPrivate(dataDir);
  } catch (error) {
    await unlock();
    throw error;
  }
  const sweep = setInterval(() => {
    try {
      makeDataDirPrivate(dataDir);
    } catch (error) {
      logger.warn({ err: error }, 'DATA_DIR privacy sweep failed');
    }
  }, PRIVACY_SWEEP_MS).unref();
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
  await server.start();
  const address = server.getServerConn();
  logger.info({ directory, ms: Date.now() - started }, 'embedded PostgreSQL ready');
  return {
    url: `postgres://postgres@${address}/postgres`,
    async stop() {
      clearInterval(sweep);
      await server.stop();
      await db.close();
      makeDataDirPrivate(dataDir);
      await unlock();
    },
  };
}
