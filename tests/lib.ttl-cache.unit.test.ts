import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { TestClock } from '../server/src/lib/clock.ts';
import { createGroupedTtlCache, createTtlCache } from '../server/src/lib/ttl-cache.ts';

// The cache of webhook secrets and verified tokens: a load that an eviction overtook must not
// store what it read, or a replaced secret would be accepted for another minute.

type Secret = { secret: string; accountId: number };
const test = suite('lib/ttl-cache: time to live, size bound, groups, and loads an eviction overtook');

/** A load the test finishes by hand, to put an eviction between its read and its store. */
function deferredLoad<V>() {
  let finish!: (value: V | undefined) => void;
  const promise = new Promise<V | undefined>((resolve) => (finish = resolve));
  return { load: () => promise, finish };
}

test('an entry lives ttlMs on the injected clock; the oldest goes first past maxEntries', () => {
  const clock = new TestClock();
  const cache = createTtlCache<string>({ clock, ttlMs: 1000, maxEntries: 2 });
  cache.set('a', 'A');
  clock.advance(999);
  assert.is(cache.get('a'), 'A');
  clock.advance(1);
  assert.is(cache.get('a'), undefined);
  cache.set('a', 'A');
  cache.set('b', 'B');
  cache.set('c', 'C');
  assert.equal([cache.get('a'), cache.get('b'), cache.get('c')], [undefined, 'B', 'C']);
});

test('concurrent misses share one load; undefined is not remembered', async () => {
  const cache = createTtlCache<string>({ clock: new TestClock(), ttlMs: 60_000, maxEntries: 10 });
  let loads = 0;
  const load = async () => {
    loads += 1;
    return loads > 1 ? 'found' : undefined;
  };
  assert.equal(await Promise.all([cache.getOrLoad('k', load), cache.getOrLoad('k', load)]), [undefined, undefined]);
  assert.is(loads, 1);
  assert.is(await cache.getOrLoad('k', load), 'found', 'a miss was not cached');
  assert.is(await cache.getOrLoad('k', load), 'found');
  assert.is(loads, 2, 'the hit needed no load');
});

test('a load overtaken by evictGroup is returned but not stored, even though the group had no entry yet', async () => {
  const cache = createGroupedTtlCache<Secret>({ clock: new TestClock(), ttlMs: 60_000, maxEntries: 10, groupOf: (value) => value.accountId });
  const stale = deferredLoad<Secret>();
  const loading = cache.getOrLoad('payment:site_1', stale.load);
  // The secret is replaced and the account's entries evicted while the old one is being read.
  cache.evictGroup(7);
  stale.finish({ secret: 'old', accountId: 7 });
  assert.equal(await loading, { secret: 'old', accountId: 7 }, 'the caller that asked still gets what was read');
  assert.is(cache.get('payment:site_1'), undefined, 'the old secret was not stored');
  assert.equal(await cache.getOrLoad('payment:site_1', async () => ({ secret: 'new', accountId: 7 })), { secret: 'new', accountId: 7 });
  assert.is(cache.get('payment:site_1')?.secret, 'new');
});

test('clear and delete overtake a load too; a load nothing overtook is stored', async () => {
  const cache = createGroupedTtlCache<Secret>({ clock: new TestClock(), ttlMs: 60_000, maxEntries: 10, groupOf: (value) => value.accountId });
  for (const invalidate of [() => cache.clear(), () => cache.delete('other')]) {
    const stale = deferredLoad<Secret>();
    const loading = cache.getOrLoad('k', stale.load);
    invalidate();
    stale.finish({ secret: 'old', accountId: 1 });
    await loading;
    assert.is(cache.get('k'), undefined);
  }
  const fresh = deferredLoad<Secret>();
  const loading = cache.getOrLoad('k', fresh.load);
  fresh.finish({ secret: 'current', accountId: 1 });
  await loading;
  assert.is(cache.get('k')?.secret, 'current');
});

test('set with the epoch read before a query drops the row when an eviction came since; evictGroup removes only its group', () => {
  const cache = createGroupedTtlCache<Secret>({ clock: new TestClock(), ttlMs: 60_000, maxEntries: 10, groupOf: (value) => value.accountId });
  cache.set('x', { secret: 'x', accountId: 1 });
  cache.set('y', { secret: 'y', accountId: 2 });
  const before = cache.epoch;
  cache.evictGroup(1);
  assert.is(cache.get('x'), undefined);
  assert.is(cache.get('y')?.secret, 'y');
  cache.set('z', { secret: 'z', accountId: 3 }, before);
  assert.is(cache.get('z'), undefined);
  cache.set('z', { secret: 'z', accountId: 3 }, cache.epoch);
  assert.is(cache.get('z')?.secret, 'z');
});

test.run();
