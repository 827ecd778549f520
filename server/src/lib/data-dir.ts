import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const GROUP_AND_OTHERS = 0o077;

/**
 * DATA_DIR holds password hashes, e-mail addresses, payloads and development secrets: it is
 * made, and kept, mode 0700, and nothing in it may be readable or writable by group or
 * others. PGlite creates its files 0666 whatever the umask, so its files are swept too: at
 * start, while it runs (files it makes later) and at stop. The 0700 directory is what keeps
 * others out in between. Throws when the directory cannot be made private (another owner).
 */
export function makeDataDirPrivate(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    restrict(dataDir);
  } catch (error) {
    throw new Error(`DATA_DIR ${dataDir} cannot be made private (mode 0700): ${(error as Error).message}`);
  }
}

function restrict(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if (stat.mode & GROUP_AND_OTHERS) chmodSync(path, stat.mode & 0o700);
  if (stat.isDirectory()) for (const name of readdirSync(path)) restrict(join(path, name));
}
