import { randomInt } from 'node:crypto';
import { keyedHash } from '../../lib/crypto.ts';

export const RECOVERY_CODE_COUNT = 10;

// No 0/o, 1/l/i, u/v: a code read off paper or a screen is typed back right the first time.
const ALPHABET = '23456789abcdefghjkmnpqrstwxyz';
const HALF = 5;

function randomPart(): string {
  let part = '';
  for (let i = 0; i < HALF; i++) part += ALPHABET[randomInt(ALPHABET.length)];
  return part;
}

/** Ten fresh codes, `xxxxx-xxxxx`, about 48 bits each. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => `${randomPart()}-${randomPart()}`);
}

/** A code as typed: case, spaces and the dash do not matter. Undefined when it cannot be one. */
export function normaliseRecoveryCode(typed: string): string | undefined {
  const bare = typed.toLowerCase().replace(/[\s-]+/g, '');
  if (bare.length !== 2 * HALF || [...bare].some((c) => !ALPHABET.includes(c))) return undefined;
  return `${bare.slice(0, HALF)}-${bare.slice(HALF)}`;
}

/**
 * Stored as keyed hashes, one per DATA_KEY (the first writes): 48 bits would fall to an
 * offline search of a plain hash, not to one whose key never left the service.
 */
export function recoveryCodeHashes(keys: Buffer[], code: string): Buffer[] {
  return keys.map((key) => keyedHash(key, code));
}
