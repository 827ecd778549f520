import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeDataDirPrivate } from './data-dir.ts';
import { generateSigningKey, parseSigningKeys, type SigningKey } from './signing-keys.ts';

export type DevSecrets = { file: string; jwtSecret: Buffer; dataKey: Buffer };

/** A development secrets file that is there but not as Gatehouse wrote it. */
export class DevSecretsUnreadable extends Error {
  constructor(readonly file: string) {
    super(
      `${file} is not the development secrets file Gatehouse writes; restore it, or delete it to have new secrets made ` +
        '(what the old DATA_KEY sealed then cannot be opened), or set JWT_SECRET and DATA_KEY',
    );
    this.name = 'DevSecretsUnreadable';
  }
}

/**
 * Development secrets live in DATA_DIR so that sessions and encrypted API keys survive a
 * restart; they are made once, readable only by the owner, and DATA_DIR is made private
 * (0700) at every load, with or without the embedded database. A file that is there but
 * unreadable as secrets stops the start: making new ones over it would lose, for good, the
 * key that opens what the database keeps sealed.
 */
export function loadDevSecrets(dataDir: string): DevSecrets {
  const file = resolve(join(dataDir, 'dev-secrets.json'));
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  makeDataDirPrivate(dataDir);
  if (text !== undefined) {
    const stored = parseStored(text);
    if (!stored) throw new DevSecretsUnreadable(file);
    return { file, jwtSecret: Buffer.from(stored.jwtSecret), dataKey: Buffer.from(stored.dataKey, 'hex') };
  }
  const fresh = { jwtSecret: randomBytes(48).toString('base64'), dataKey: randomBytes(32).toString('hex') };
  writeWhole(file, JSON.stringify(fresh, null, 2));
  return { file, jwtSecret: Buffer.from(fresh.jwtSecret), dataKey: Buffer.from(fresh.dataKey, 'hex') };
}

/** Whole or not at all, readable by the owner only: a start stopped mid-write must not leave half a file behind. */
function writeWhole(file: string, text: string): void {
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, text, { mode: 0o600 });
  renameSync(partial, file);
}

/** A development signing key file that is there but not as Gatehouse wrote it. */
export class DevSigningKeyUnreadable extends Error {
  constructor(readonly file: string) {
    super(`${file} is not the development access-token key Gatehouse writes; delete it to have a new one made (tokens it signed stop verifying), or set ACCESS_TOKEN_KEYS`);
    this.name = 'DevSigningKeyUnreadable';
  }
}

/**
 * The key that signs access tokens outside production when ACCESS_TOKEN_KEYS is not set: an
 * Ed25519 private JWK kept in DATA_DIR, made once, so that tokens and the services' cached
 * JWKS stay good across restarts. Made and kept as the secrets above are.
 */
export function loadDevSigningKey(dataDir: string): { file: string; key: SigningKey } {
  const file = resolve(join(dataDir, 'access-token-key.json'));
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  makeDataDirPrivate(dataDir);
  if (text === undefined) {
    text = JSON.stringify(generateSigningKey('EdDSA'), null, 2);
    writeWhole(file, text);
  }
  const parsed = parseSigningKeys(text);
  if (!('keys' in parsed) || parsed.keys.length !== 1) throw new DevSigningKeyUnreadable(file);
  return { file, key: parsed.keys[0] };
}

function parseStored(text: string): { jwtSecret: string; dataKey: string } | undefined {
  try {
    const stored = JSON.parse(text) as { jwtSecret?: unknown; dataKey?: unknown } | null;
    if (typeof stored?.jwtSecret === 'string' && stored.jwtSecret.length > 0 && typeof stored.dataKey === 'string' && /^[0-9a-f]{64}$/.test(stored.dataKey)) {
      return { jwtSecret: stored.jwtSecret, dataKey: stored.dataKey };
    }
  } catch {
    // not JSON: unreadable, as below
  }
  return undefined;
}
