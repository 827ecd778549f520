import { loadConfig } from '../config.ts';
import { embeddedDataDir, ServedByService } from './forward.ts';
import { cliIo } from './io.ts';
import { connectToService } from './service-socket.ts';
import type { Actor, Config, Db, Deps, Logger } from '../index.ts';

// The server's face (../index.ts), and with it the services and the database stack
// (Sequelize, pg-boss, argon2, …), is imported when a command first needs it, not at start:
// loading it takes a second or more, which `--help` and a refused value should not cost.

export type AdminService = typeof import('../index.ts')['adminService'];
export type EventsAdminService = typeof import('../index.ts')['eventsAdminService'];

/** The CLI acts as no account, on the server itself; the audit log says so (account_id NULL). */
export const CLI_ACTOR: Actor = { accountId: null, request: { ip: '', requestId: 'cli', userAgent: 'gatehouse-cli' } };

/**
 * Log lines go to stderr, so stdout holds only what the command prints (one JSON document
 * with --json). Warnings only, unless LOG_LEVEL is set: the service's default 'info' would
 * bury a person's answer under start-up chatter.
 */
async function cliLogger(config: Config, env: NodeJS.ProcessEnv): Promise<Logger> {
  const [{ default: pino }, { createLogger }] = await Promise.all([import('pino'), import('../index.ts')]);
  const { stderr } = cliIo();
  // The process's stderr straight to its file descriptor, as the service logs; another (a command run in process) as lines written to it.
  const destination = stderr === process.stderr ? pino.destination(2) : { write: (line: string) => void stderr.write(line) };
  return createLogger(env.LOG_LEVEL ? config.logLevel : 'warn', destination);
}

/**
 * The admin services with everything they need, built as the worker builds it (pending
 * migrations applied), but without supervising the queue or listening for cache notices:
 * the CLI only enqueues, and it works whether or not the gateway runs. Closed whatever
 * happens. Run by a service for a CLI beside it, the service's own (serve.ts).
 */
export async function withServices<T>(work: (admin: AdminService, deps: Deps) => Promise<T>, env: NodeJS.ProcessEnv = cliIo().env): Promise<T> {
  const served = cliIo().deps;
  if (served) return work((await import('../index.ts')).adminService, served);
  const config = loadConfig(env);
  const [{ openDeps, adminService }, logger] = await Promise.all([import('../index.ts'), cliLogger(config, env)]);
  const deps = await openOrDefer(() => openDeps(config, { superviseQueue: false, authCache: false, logger }), env);
  try {
    return await work(adminService, deps);
  } finally {
    await deps.close();
  }
}

/** The database alone, for commands that must not change it as openDeps does (it migrates). */
export async function withDatabase<T>(work: (db: Db) => Promise<T>, env: NodeJS.ProcessEnv = cliIo().env): Promise<T> {
  const served = cliIo().deps;
  if (served) return work(served.db);
  const config = loadConfig(env);
  const [{ createDatabase }, logger] = await Promise.all([import('../index.ts'), cliLogger(config, env)]);
  const db = await openOrDefer(() => createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger }), env);
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

/** How long a command waits for the service that holds DATA_DIR to take commands: a service starting migrates first. */
const SERVICE_START_WAIT_MS = 60_000;
const RETRY_MS = 250;

const isDataDirInUse = (error: unknown) => error instanceof Error && error.name === 'DataDirInUse';

/**
 * Opens the embedded database, or, when a running service holds DATA_DIR, hands the whole
 * command to it (ServedByService, which runAdminCommand forwards): found in use, the CLI asks
 * the service's socket, and tries again while a service is still starting (its socket comes
 * once it has migrated) or another command holds the files for a moment.
 */
async function openOrDefer<T>(open: () => Promise<T>, env: NodeJS.ProcessEnv): Promise<T> {
  const dataDir = embeddedDataDir(env);
  const deadline = Date.now() + SERVICE_START_WAIT_MS;
  for (;;) {
    try {
      return await open();
    } catch (error) {
      if (dataDir === undefined || !isDataDirInUse(error)) throw error;
      const socket = await connectToService(dataDir);
      if (socket) throw new ServedByService(socket);
      if (Date.now() >= deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}
