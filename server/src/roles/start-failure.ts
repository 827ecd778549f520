import { resolve } from 'node:path';
import { ConfigError } from '../config.ts';
import { EmbeddedDatabaseMissing, isDatabaseUnavailable } from '../lib/db.ts';
import { DataDirInUse, EmbeddedDatabaseUnreadable } from '../lib/embedded-postgres.ts';
import { StartError } from '../errors/start-error.ts';

/**
 * A start that failed, as the one line an operator reads (docs/OPERATIONS.md, Troubleshooting): what went
 * wrong and which variable to fix, never a stack trace and never a secret (a DATABASE_URL is
 * shown without its password). `server/src/cli` and the entry points all print this.
 */
export function describeStartFailure(error: unknown, env: NodeJS.ProcessEnv = process.env): string {
  if (error instanceof ConfigError) return `invalid configuration: ${error.problems.join('; ')}`;
  if (error instanceof StartError) return error.message;
  if (error instanceof DataDirInUse) {
    return `${error.message}: stop the other process first (npm start, or an admin command still running), or set DATA_DIR to another directory`;
  }
  if (error instanceof EmbeddedDatabaseMissing) return `${error.message}; set DATABASE_URL to a PostgreSQL server`;
  if (error instanceof EmbeddedDatabaseUnreadable) {
    return `${error.message}: its files are damaged or of another version; move ${error.directory} aside to start on an empty one (what it held stays in the moved folder), or set DATABASE_URL to a PostgreSQL server`;
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const syscall = (error as NodeJS.ErrnoException | undefined)?.syscall;
  // Listening on a HOST that is no name of this machine fails in the name lookup, as a
  // database host that cannot be found does: the name that was looked up tells them apart.
  if (syscall === 'getaddrinfo' && isHostLookup(error, env)) return `HOST ${env.HOST} is not a name or address of this machine (${code}); set HOST (0.0.0.0 listens on every interface)`;
  if (isDatabaseUnavailable(error)) return `cannot reach ${databaseTarget(env)}: ${rootMessage(error)}; check DATABASE_URL and that the database server is up`;
  if (syscall === 'listen' && code === 'EADDRINUSE') return `port ${listening(error)} is already in use by another process; set PORT (or HOST) to a free one`;
  if (syscall === 'listen' && (code === 'EACCES' || code === 'EPERM')) return `not allowed to listen on port ${listening(error)}; set PORT to 1024 or above`;
  if (syscall === 'listen' && code === 'EADDRNOTAVAIL') return `HOST ${env.HOST ?? ''} is not an address of this machine; set HOST (0.0.0.0 listens on every interface)`;
  const path = (error as { path?: string } | undefined)?.path;
  if (code && ['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'ENOTDIR', 'EEXIST'].includes(code) && path && resolve(path).startsWith(resolve(env.DATA_DIR || './.data'))) {
    return `DATA_DIR ${env.DATA_DIR || './.data'} cannot be written (${code} on ${path}); set DATA_DIR to a directory this user owns and can write`;
  }
  return `unexpected failure: ${rootMessage(error)}`;
}

/** Whether `error` is one of the failures a start can run into (and describeStartFailure words). */
export function isStartFailure(error: unknown): boolean {
  return (
    error instanceof ConfigError ||
    error instanceof StartError ||
    error instanceof DataDirInUse ||
    error instanceof EmbeddedDatabaseMissing ||
    error instanceof EmbeddedDatabaseUnreadable ||
    isDatabaseUnavailable(error)
  );
}

function isHostLookup(error: unknown, env: NodeJS.ProcessEnv): boolean {
  const hostname = (error as { hostname?: string }).hostname;
  if (!env.HOST || hostname !== env.HOST) return false;
  try {
    return !env.DATABASE_URL || new URL(env.DATABASE_URL).hostname !== hostname;
  } catch {
    return true;
  }
}

/** The database the configuration points at, without credentials: a URL may carry a password. */
export function databaseTarget(env: NodeJS.ProcessEnv): string {
  if (!env.DATABASE_URL) return `the embedded database in DATA_DIR (${env.DATA_DIR || './.data'})`;
  try {
    const url = new URL(env.DATABASE_URL);
    return `the database at DATABASE_URL (${url.host}${url.pathname})`;
  } catch {
    return 'the database at DATABASE_URL';
  }
}

/** The innermost message, on one line: Sequelize wraps pg's, and pg's says what actually happened. */
export function rootMessage(error: unknown): string {
  let current = error;
  for (let depth = 0; depth < 5; depth++) {
    const wrapped = current as { parent?: unknown; original?: unknown; cause?: unknown };
    const inner = wrapped.parent ?? wrapped.original ?? wrapped.cause;
    if (!(inner instanceof Error)) break;
    current = inner;
  }
  const text = current instanceof Error ? current.message || current.name : String(current);
  return text.replace(/\s*\n\s*/g, ' ');
}

const listening = (error: unknown) => (error as { port?: number }).port ?? '';
