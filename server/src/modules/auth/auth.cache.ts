import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { AccountRow } from './auth.credentials.ts';

/** The channel migration 0003 notifies with the id of every account whose auth rows changed. */
export const AUTH_CHANNEL = 'gatehouse_auth';
/** What the LISTEN connection calls itself in pg_stat_activity. */
export const AUTH_CACHE_APPLICATION_NAME = 'gatehouse-auth-cache';

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 10_000;
/**
 * A connection that died without a FIN (a dropped NAT entry, a frozen peer) raises no error,
 * and a deaf listener would keep serving rows it is never told about: a round trip this often
 * proves it alive (TCP keeps notifications sent before the answer ahead of it).
 */
const HEARTBEAT_MS = 5_000;

/** An account as found by API key, or by session together with that session's end. */
export type CachedAuth = { account: AccountRow; sessionExpiresAt?: Date };

export interface AuthCache {
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
  close(): Promise<void>;
}

/**
 * Not the HMAC the database is searched by: on a hit that HMAC would be most of the lookup's
 * cost. A SHA-256 under a salt of this process's own keeps the plaintext key out of the map
 * all the same (a 256-bit random key cannot be guessed back from its hash).
 */
const KEY_SALT = randomBytes(16).toString('hex');
export const apiKeyCacheKey = (apiKey: string) => `key:${createHash('sha256').update(KEY_SALT + apiKey.toLowerCase()).digest('base64')}`;
export const sessionCacheKey = (sessionId: string) => `session:${sessionId.toLowerCase()}`;

export type AuthCacheOptions = {
  /** Undefined on the embedded database: see createAuthCache. */
  databaseUrl: string | undefined;
  logger: Logger;
  clock: Clock;
  /** Only a safety net: invalidation is by notification, not by age. */
  ttlMs?: number;
  maxEntries?: number;
};

type Entry = CachedAuth & { storedAt: number };

/** A bounded map (oldest stored goes first) with an index from account id to its keys. */
function createEntries(clock: Clock, ttlMs: number, maxEntries: number) {
  const entries = new Map<string, Entry>();
  const keysByAccount = new Map<number, Set<string>>();
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    const keys = keysByAccount.get(entry.account.id);
    keys?.delete(key);
    if (keys?.size === 0) keysByAccount.delete(entry.account.id);
  };
  return {
    get(key: string): Entry | undefined {
      const entry = entries.get(key);
      if (!entry) return undefined;
      const now = clock.now().getTime();
      const sessionOver = entry.sessionExpiresAt !== undefined && entry.sessionExpiresAt.getTime() <= now;
      if (sessionOver || now - entry.storedAt >= ttlMs) {
        remove(key);
        return undefined;
      }
      return entry;
    },
    put(key: string, value: CachedAuth) {
      remove(key);
      if (entries.size >= maxEntries) remove(entries.keys().next().value!);
      // Shared by every request that hits it: nobody may change it in place.
      const account = Object.freeze({ ...value.account });
      entries.set(key, { account, sessionExpiresAt: value.sessionExpiresAt, storedAt: clock.now().getTime() });
      const keys = keysByAccount.get(account.id) ?? new Set<string>();
      keysByAccount.set(account.id, keys.add(key));
    },
    evictAccount(accountId: number) {
      for (const key of keysByAccount.get(accountId) ?? []) entries.delete(key);
      keysByAccount.delete(accountId);
    },
    clear() {
      entries.clear();
      keysByAccount.clear();
    },
  };
}

type ListenerEvents = { onListening(): void; onLost(): void; onNotification(payload: string): void };

/**
 * A connection of its own (LISTEN holds a pooled one forever, and the pool recycles idle
 * ones), reconnected with capped backoff. onListening only fires once LISTEN has succeeded.
 */
function startListener(databaseUrl: string, logger: Logger, events: ListenerEvents): { close(): Promise<void> } {
  let client: pg.Client | undefined;
  let closed = false;
  let delay = BACKOFF_MIN_MS;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const lost = (from: pg.Client, error?: Error): Promise<void> | undefined => {
    if (from !== client) return undefined;
    client = undefined;
    clearInterval(heartbeat);
    events.onLost();
    const ended = from.end().catch(() => undefined);
    if (closed) return ended;
    logger.warn({ err: error, retryInMs: delay }, 'auth cache off: its LISTEN connection is gone');
    retry = setTimeout(connect, delay).unref();
    delay = Math.min(delay * 2, BACKOFF_MAX_MS);
    return ended;
  };

  const connect = () => {
    const next = new pg.Client({
      connectionString: databaseUrl,
      application_name: AUTH_CACHE_APPLICATION_NAME,
      connectionTimeoutMillis: HEARTBEAT_MS,
      query_timeout: HEARTBEAT_MS,
    });
    client = next;
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next));
    next.on('notification', (message) => {
      if (message.channel === AUTH_CHANNEL) events.onNotification(message.payload ?? '');
    });
    next
      .connect()
      .then(() => next.query(`LISTEN ${AUTH_CHANNEL}`))
      .then(() => {
        if (next !== client) return;
        delay = BACKOFF_MIN_MS;
        heartbeat = setInterval(() => next.query('SELECT 1').catch((error: Error) => lost(next, error)), HEARTBEAT_MS).unref();
        events.onListening();
        logger.info('auth cache on: listening for account changes');
      })
      .catch((error: Error) => lost(next, error));
  };

  connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      if (client) await lost(client);
    },
  };
}

/**
 * The accounts and sessions /me found recently, so that a repeat request needs no database
 * round trip. Correct without a TTL: every change to `accounts` or `sessions` is notified on
 * commit (migration 0003) and evicts that account's entries, and while the notifications
 * cannot be heard the cache is off and empty, so it never serves what it was not told about.
 *
 * Off on the embedded database: there is one process and one connection, which a LISTEN
 * would have to share with every query, and the round trip it saves is in-process anyway.
 */
export function createAuthCache(options: AuthCacheOptions): AuthCache {
  const { databaseUrl, logger, clock, ttlMs = 60_000, maxEntries = 10_000 } = options;
  const entries = createEntries(clock, ttlMs, maxEntries);
  let enabled = false;
  let epoch = 0;
  const forgetAll = () => {
    epoch += 1;
    entries.clear();
  };

  const listener = databaseUrl
    ? startListener(databaseUrl, logger, {
        onListening() {
          forgetAll();
          enabled = true;
        },
        onLost() {
          enabled = false;
          forgetAll();
        },
        onNotification(payload) {
          const accountId = Number(payload);
          // Anything but an account id ('*' after a TRUNCATE) clears the lot.
          if (/^[1-9][0-9]*$/.test(payload) && Number.isSafeInteger(accountId)) {
            epoch += 1;
            entries.evictAccount(accountId);
          } else forgetAll();
        },
      })
    : undefined;

  return {
    get enabled() {
      return enabled;
    },
    get epoch() {
      return epoch;
    },
    get: (key) => (enabled ? entries.get(key) : undefined),
    set(key, value, epochBefore) {
      if (enabled && epochBefore === epoch) entries.put(key, value);
    },
    evictAccount(accountId) {
      epoch += 1;
      entries.evictAccount(accountId);
    },
    close: async () => listener?.close(),
  };
}
