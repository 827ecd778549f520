/**
 * A small time-bounded cache for decrypted per-site and per-channel secrets, so a burst of
 * deliveries does one lookup and one decryption instead of one per request. Secrets are
 * never changed in place (there is no procedure for it), so a short life is only there to
 * bound memory and to notice deletions.
 */
export function createSecretCache<V>(options: { ttlMs: number; maxEntries: number }) {
  const entries = new Map<string, { value: V; expiresAt: number }>();
  const inFlight = new Map<string, Promise<V | undefined>>();

  return {
    /** The cached value, or what `load` finds; concurrent misses for one key share a load. */
    async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
      const hit = entries.get(key);
      if (hit && hit.expiresAt > performance.now()) return hit.value;
      const running = inFlight.get(key);
      if (running) return running;
      const loading = load().finally(() => inFlight.delete(key));
      inFlight.set(key, loading);
      const value = await loading;
      // Unknown keys are not remembered: a site created a moment later must work at once.
      if (value !== undefined) remember(key, value);
      return value;
    },
  };

  function remember(key: string, value: V): void {
    entries.delete(key);
    // Maps iterate in insertion order, so the first key is the oldest.
    if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value!);
    entries.set(key, { value, expiresAt: performance.now() + options.ttlMs });
  }
}
