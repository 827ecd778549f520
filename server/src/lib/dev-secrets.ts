import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeDataDirPrivate } from './data-dir.ts';

export type DevSecrets = { file: string; jwtSecret: Buffer; dataKey: Buffer };

/**
 * Development secrets live in DATA_DIR so that sessions and encrypted API keys survive a
 * restart; they are made once, readable only by the owner.
 */
export function loadDevSecrets(dataDir: string): DevSecrets {
  const file = resolve(join(dataDir, 'dev-secrets.json'));
  let stored: { jwtSecret?: unknown; dataKey?: unknown } = {};
  try {
    stored = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    stored = {};
  }
  if (typeof stored.jwtSecret === 'string' && typeof stored.dataKey === 'string' && /^[0-9a-f]{64}$/.test(stored.dataKey)) {
    return { file, jwtSecret: Buffer.from(stored.jwtSecret), dataKey: Buffer.from(stored.dataKey, 'hex') };
  }
  const fresh = { jwtSecret: randomBytes(48).toString('base64'), dataKey: randomBytes(32).toString('hex') };
  makeDataDirPrivate(dataDir);
  writeFileSync(file, JSON.stringify(fresh, null, 2), { mode: 0o600 });
  return { file, jwtSecret: Buffer.from(fresh.jwtSecret), dataKey: Buffer.from(fresh.dataKey, 'hex') };
}
