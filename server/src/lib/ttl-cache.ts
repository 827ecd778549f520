import type { Clock } from './clock.ts';

export type TtlCacheOptions<V> = {
  clock: Clock;
  /** How long an entry lives after it was stored, on the injected clock. */
  ttlMs: number;
  /** Past this, the oldest entry goes first. */
  maxEntries: number;
  /** Told of every entry that is stored. */
  onStore?(key: string, value: V): void;
  /** Told of every entry that leaves (expired, pushed out, replaced, deleted; not `clear`). */
  onRemove?(key: string, value: V): void;
};

export interface TtlCache<V> {
  /**
   * Moves on every invalidation (`delete`, `clear`, a group's eviction). A value read from the
   * database is stored only if the epoch has not moved since before the read: otherwise the
   * change that invalidated it may have come after the read, and the value would outlive it.
   */
  readonly epoch: number;
  get(key: string): V | undefined;
  /** Stores `value`, unless `epochBefore` is given and an invalidation came since. */
  set(key: string, value: V, epochBefore?: number): void;
  delete(key: string): void;
  /** One invalidation of these keys: the epoch moves even when none of them is cached. */
  evict(keys: Iterable<string>): void;
  clear(): void;
  /**
   * The cached value, or what `load` finds. Concurrent misses for one key share a load, and
   * `undefined` is not remembered (a row made a moment later must be found at once), nor is
   * a value whose load an invalidation overtook.
   */
  getOrLoad(key: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
}

/**
 * The one cache of the service (authenticated accounts, verified JWTs, webhook secrets): a
 * bounded Map, whose insertion order makes the first key the oldest, with a time to live
 * on the clock the service runs on, so tests move it like everything else.
 */
export function createTtlCache<V>(options: TtlCacheOptions<V>): TtlCache<V> {
  const { clock, ttlMs, maxEntries, onStore, onRemove } = options;
  const entries = new Map<string, { value: V; storedAt: number }>();
  const inFlight = new Map<string, Promise<V | undefined>>();
  let epoch = 0;

  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    onRemove?.(key, entry.value);
  };

  const cache: TtlCache<V> = {
    get epoch() {
      return epoch;
    },
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (clock.now().getTime() - entry.storedAt < ttlMs) return entry.value;
      remove(key);
      return undefined;
    },
    set(key, value, epochBefore) {
      if (epochBefore !== undefined && epochBefore !== epoch) return;
      remove(key);
      if (entries.size >= maxEntries) remove(entries.keys().next().value!);
      entries.set(key, { value, storedAt: clock.now().getTime() });
      onStore?.(key, value);
    },
    delete(key) {
      cache.evict([key]);
    },
    evict(keys) {
      epoch += 1;
      for (const key of keys) remove(key);
    },
    clear() {
      epoch += 1;
      entries.clear();
    },
    async getOrLoad(key, load) {
      const hit = cache.get(key);
      if (hit !== undefined) return hit;
      const running = inFlight.get(key);
      if (running) return running;
      const epochBefore = epoch;
      const loading = load().finally(() => inFlight.delete(key));
      inFlight.set(key, loading);
      const value = await loading;
      if (value !== undefined) cache.set(key, value, epochBefore);
      return value;
    },
  };
  return cache;
}

export interface GroupedTtlCache<V> extends TtlCache<V> {
  /**
   * Removes every entry of the group (an account's, say), whatever its key, and moves the
   * epoch even when the group has none: a load for it may be under way.
   */
  evictGroup(group: number): void;
}

/**
 * A TTL cache whose entries also belong to a group, told by `groupOf`, so that one change
 * (to an account) can evict every entry it concerns (its sessions, its API keys, its sites'
 * webhook secrets) without knowing their keys.
 */
export function createGroupedTtlCache<V>(options: Omit<TtlCacheOptions<V>, 'onStore' | 'onRemove'> & { groupOf(value: V): number }): GroupedTtlCache<V> {
  const keysByGroup = new Map<number, Set<string>>();
  const cache = createTtlCache<V>({
    ...options,
    onStore(key, value) {
      const group = options.groupOf(value);
      keysByGroup.set(group, (keysByGroup.get(group) ?? new Set<string>()).add(key));
    },
    onRemove(key, value) {
      const group = options.groupOf(value);
      const keys = keysByGroup.get(group);
      keys?.delete(key);
      if (keys?.size === 0) keysByGroup.delete(group);
    },
  });
  return {
    get epoch() {
      return cache.epoch;
    },
    get: cache.get,
    set: cache.set,
    delete: cache.delete,
    evict: cache.evict,
    getOrLoad: cache.getOrLoad,
    clear() {
      cache.clear();
      keysByGroup.clear();
    },
    evictGroup(group) {
      // A copy: removing an entry deletes its key from this very set.
      cache.evict([...(keysByGroup.get(group) ?? [])]);
    },
  };
}
