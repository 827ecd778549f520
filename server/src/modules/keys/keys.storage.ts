import type { Deps } from '../../deps.ts';
import { keyedHash } from '../../lib/crypto.ts';
import type { Queryable } from '../../lib/db.ts';
import { dropPreviousApiKeysUntil } from '../accounts/index.ts';

/** The lookup hash a key is stored under: keyed with the first DATA_KEY. */
export function apiKeyHash(deps: Pick<Deps, 'apiKeyHashKeys'>, apiKey: string): Buffer {
  return keyedHash(deps.apiKeyHashKeys[0], apiKey.toLowerCase());
}

/**
 * Every hash a key may be stored under, one per DATA_KEY: during a rotation, keys stored
 * before it still carry the old key's hash until `secrets reencrypt` rewrites them.
 */
export function apiKeyLookupHashes(deps: Pick<Deps, 'apiKeyHashKeys'>, apiKey: string): Buffer[] {
  const normalized = apiKey.toLowerCase();
  return deps.apiKeyHashKeys.map((key) => keyedHash(key, normalized));
}

/** Housekeeping: previous keys whose window has ended lose their lookup hash. Returns how many. */
export async function dropExpiredPreviousKeys(db: Queryable, now: Date): Promise<number> {
  return dropPreviousApiKeysUntil(db, now);
}
