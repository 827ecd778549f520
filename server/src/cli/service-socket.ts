import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// Where a service on the embedded database takes the CLI's commands (docs/OPERATIONS.md,
// Operator CLI): a unix socket that only DATA_DIR's owner can open. In DATA_DIR itself
// (mode 0700) when its path is short enough for a socket's, else in a directory of the
// owner's own (0700) under the temporary directory, named by a hash of DATA_DIR. Both ends
// work it out alike from DATA_DIR.

const SOCKET_NAME = 'admin.sock';
/** A socket's path is at most 107 bytes on Linux and 103 on macOS; kept under both. */
const MAX_SOCKET_PATH = 100;
const CONNECT_TIMEOUT_MS = 2000;

export type SocketPlace = { path: string; privateDir?: string };

export function adminSocketPlace(dataDir: string): SocketPlace {
  const dir = resolve(dataDir);
  const inside = join(dir, SOCKET_NAME);
  if (Buffer.byteLength(inside) <= MAX_SOCKET_PATH) return { path: inside };
  const hash = createHash('sha256').update(dir).digest('hex').slice(0, 20);
  const base = Buffer.byteLength(tmpdir()) <= MAX_SOCKET_PATH - 40 ? tmpdir() : '/tmp';
  const privateDir = join(base, `gatehouse-${hash}`);
  return { path: join(privateDir, SOCKET_NAME), privateDir };
}

/**
 * Whether `dir` is a directory of this user's alone: not a link, owned by this user, no
 * access for group or others. A directory someone else made in the shared temporary
 * directory could hold a socket of theirs, listening for our commands.
 */
export function isPrivateDir(dir: string): boolean {
  try {
    const stat = lstatSync(dir);
    const ownUid = process.getuid?.();
    return stat.isDirectory() && (ownUid === undefined || stat.uid === ownUid) && (stat.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/** The directory a socket outside DATA_DIR lives in, made private; false if another user has it. */
export function preparePrivateDir(dir: string): boolean {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return isPrivateDir(dir);
}

/**
 * A connection to the service that holds `dataDir`, or undefined when none answers there: no
 * socket, or one a killed service left behind (refused). The socket file is never removed
 * here: a service starting this instant may just have made it.
 */
export async function connectToService(dataDir: string): Promise<Socket | undefined> {
  const place = adminSocketPlace(dataDir);
  if (place.privateDir && !isPrivateDir(place.privateDir)) return undefined;
  if (!existsSync(place.path)) return undefined;
  return new Promise((resolvePromise) => {
    const socket = connect(place.path);
    const fail = () => {
      socket.destroy();
      resolvePromise(undefined);
    };
    const timer = setTimeout(fail, CONNECT_TIMEOUT_MS);
    socket.once('error', () => {
      clearTimeout(timer);
      fail();
    });
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolvePromise(socket);
    });
  });
}
