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

type LockOwner = { pid: number; hostname: string };

/** Two processes on one DATA_DIR would corrupt it (contract section 10). */
export class DataDirInUse extends Error {
  constructor(readonly dataDir: string) {
    super(`DATA_DIR ${dataDir} is in use by another Gatehouse process (the embedded database serves one process at a time)`);
    this.name = 'DataDirInUse';
  }
}

async function lockDataDir(dataDir: string, logger: Logger): Promise<() => Promise<void>> {
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
  let release: () => Promise<void>;
  try {
    release = await lock();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    const owner = readOwner(ownerPath);
    if (!owner || !diedOnThisMachine(owner)) throw new DataDirInUse(dataDir);
    logger.warn({ pid: owner.pid }, 'DATA_DIR was locked by a process that is gone; taking the lock over');
    rmSync(lockPath, { recursive: true, force: true });
    release = await lock().catch((again: NodeJS.ErrnoException) => {
      throw again.code === 'ELOCKED' ? new DataDirInUse(dataDir) : again;
    });
  }
  writeFileSync(ownerPath, JSON.stringify({ pid: process.pid, hostname: hostname() } satisfies LockOwner), { mode: 0o600 });
  return async () => {
    rmSync(ownerPath, { force: true });
    await release();
  };
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8'));
    return Number.isSafeInteger(owner?.pid) && typeof owner?.hostname === 'string' ? owner : undefined;
  } catch {
    return undefined;
  }
}

function diedOnThisMachine(owner: LockOwner): boolean {
  if (owner.hostname !== hostname()) return false;
  if (owner.pid === process.pid) return true;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export type EmbeddedPostgres = { url: string; stop(): Promise<void> };

/**
 * PGlite behind a loopback socket, so the same pg driver, Sequelize and pg-boss code runs
 * on it as on a real server. It has one backend: callers must keep to one connection.
 */
export async function startEmbeddedPostgres(dataDir: string, logger: Logger): Promise<EmbeddedPostgres> {
  const directory = resolve(join(dataDir, 'pgdata'));
  // PGlite.create does not create parent folders.
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const unlock = await lockDataDir(dataDir, logger);
  const started = Date.now();
  let db: PGlite;
  try {
    db = await PGlite.create(directory);
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
