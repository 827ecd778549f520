import { hash, randomBytes } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { accountIdOfNotice, type NoticeListener } from '../../lib/account-notices.ts';
import type { Clock } from '../../lib/clock.ts';
import { createGroupedTtlCache } from '../../lib/ttl-cache.ts';
import type { CachedAuth } from './sessions.types.ts';

export interface AuthCache extends NoticeListener {
  /** True only while the LISTEN connection is up: without it, changes would go unseen. */
  readonly enabled: boolean;
  /**
   * Moves on every invalidation. Read it before the database query and pass it to `set`,
   * which then drops the row if a notice came in meanwhile: the row may predate that change.
   */
  readonly epoch: number;
  get(key: string): CachedAuth | undefined;
  set(key: string, value: CachedAuth, epochBefore: number): void;
  evictAccount(accountId: number): void;
}

/**
 * Not the HMAC the database is searched by: on a hit that HMAC would be most of the lookup's
 * cost. A SHA-256 under a salt of this process's own keeps the plaintext key out of the map
 * all the same (a 256-bit random key cannot be guessed back from its hash). One-shot
 * `hash`, not a `createHash` object: half the cost, on every request made with a key.
 */
const KEY_SALT = randomBytes(16).toString('hex');
export const apiKeyCacheKey = (apiKey: string) => `key:${hash('sha256', KEY_SALT + apiKey.toLowerCase(), 'base64')}`;
export const sessionCacheKey = (sessionId: string) => `session:${sessionId.toLowerCase()}`;

const caches = new WeakMap<Deps, AuthCache>();

/**
 * This process's /me cache for these deps, made on first use and told of changes by the
 * deps' account notices (lib/account-notices.ts): the sessions module keeps it, deps.ts only
 * brings the LISTEN connection.
 */
export function authCacheOf(deps: Deps): AuthCache {
  let cache = caches.get(deps);
  if (!cache) {
    cache = createAuthCache({ clock: deps.clock });
    caches.set(deps, cache);
    deps.accountNotices.subscribe(cache);
  }
  return cache;
}

/** An account changed here: its entries go at once (other instances hear of it by NOTIFY). */
export function forgetCachedAccount(deps: Deps, accountId: number): void {
  authCacheOf(deps).evictAccount(accountId);
}

/**
 * The accounts and sessions /me found recently, so that a repeat request needs no database
 * round trip. Correct without a TTL: every change to `accounts` or `sessions` is notified on
 * commit (migration 0003) and evicts that account's entries, and while the notifications
 * cannot be heard the cache is off and empty, so it never serves what it was not told about.
 * The TTL is only a safety net. The deps' account notices tell it; it stays off on
 * the embedded database (one process, one connection: the round trip it saves is in-process
 * anyway) and with AUTH_CACHE=off.
 */
function createAuthCache(options: { clock: Clock; ttlMs?: number; maxEntries?: number }): AuthCache {
  const entries = createGroupedTtlCache<CachedAuth>({
    clock: options.clock,
    ttlMs: options.ttlMs ?? 60_000,
    maxEntries: options.maxEntries ?? 10_000,
    groupOf: (value) => value.account.id,
  });
  let enabled = false;
  const forgetAll = () => entries.clear();
  const evictAccount = (accountId: number) => entries.evictGroup(accountId);

  return {
    get enabled() {
      return enabled;
    },
    get epoch() {
      return entries.epoch;
    },
    get(key) {
      const value = enabled ? entries.get(key) : undefined;
      // An entry lasts no longer than the credential it was found by.
      if (value?.validUntil && value.validUntil.getTime() <= options.clock.now().getTime()) {
        entries.delete(key);
        return undefined;
      }
      return value;
    },
    set(key, value, epochBefore) {
      if (!enabled) return;
      // Shared by every request that hits it: nobody may change it in place.
      entries.set(key, { ...value, account: Object.freeze({ ...value.account }) }, epochBefore);
    },
    evictAccount,
    listening() {
      forgetAll();
      enabled = true;
    },
    lost() {
      enabled = false;
      forgetAll();
    },
    notified(payload) {
      const accountId = accountIdOfNotice(payload);
      if (accountId === undefined) forgetAll();
      else evictAccount(accountId);
    },
  };
}
