/**
 * How many chunks of webhook effects the worker applies at once, and how many entries a
 * chunk's transaction takes: the first attempts taken from the inbox
 * (webhooks/inbox/dispatcher.ts) and the queue's jobs each follow a policy of their own. A
 * server gets four lanes of fifty entries; the embedded database, with its one connection,
 * one lane of one entry, which lets deliveries in between. Beside the gateway the worker
 * keeps to one lane of ten while deliveries arrive (any kept in the last `arrivingMs`), so
 * that acknowledging them, what providers time out on, keeps the CPU during a burst. But not
 * for good: once its looks or batches have come back full for `backlogMs` (a backlog the one
 * lane does not work off), it takes every lane even while deliveries arrive, or effects
 * would fall further behind for as long as the load lasts.
 *
 * Why the chunk follows the lanes: fifty entries a transaction apply a burst about half as
 * fast again as ten (a chunk's dozen statements serve five times as many), but each of those
 * statements is five times the work for PostgreSQL, on the cores that acknowledge deliveries.
 * In paired bench rounds, chunks of fifty throughout read 8% lower on ingest; fifty only
 * once arrivals stop read the same as ten (docs/BENCHMARKS.md).
 */
export type LanePolicy = {
  /** A delivery was kept by this process's gateway. */
  arrived(): void;
  /** A chunk of waiting rows was taken, or a batch of jobs fetched: `full` when it came back full (more may wait). */
  fetched(full: boolean): void;
  lanes(): number;
  /** Entries per transaction, read again for each chunk: few in the one lane beside arriving deliveries, more in every lane. */
  perTransaction(): number;
};

export const MAX_LANES = 4;
/** Entries per transaction in the one lane beside arriving deliveries, and in every lane. */
export const PER_TRANSACTION = { oneLane: 10, everyLane: 50 } as const;

export function createLanePolicy(options: { embedded: boolean; arrivingMs: number; backlogMs: number; now?: () => number }): LanePolicy {
  const now = options.now ?? (() => performance.now());
  let lastArrival = -Infinity;
  let fullSince: number | undefined;
  const lanes = () => {
    if (options.embedded) return 1;
    const at = now();
    const arriving = at - lastArrival < options.arrivingMs;
    const behind = fullSince !== undefined && at - fullSince >= options.backlogMs;
    return arriving && !behind ? 1 : MAX_LANES;
  };
  return {
    arrived: () => {
      lastArrival = now();
    },
    fetched: (full) => {
      if (!full) fullSince = undefined;
      else fullSince ??= now();
    },
    lanes,
    perTransaction: () => (options.embedded ? 1 : lanes() === 1 ? PER_TRANSACTION.oneLane : PER_TRANSACTION.everyLane),
  };
}

/**
 * Runs `run` over the items that `take` gives in turn (until it gives none), in as many lanes
 * at once as `lanes()` says at the start and after each item (a lane above the count ends, one
 * below it starts another). A lane that fails stops the others after their item; the first
 * failure is rethrown once all are done.
 */
export async function inLanes<T>(take: () => T | undefined, lanes: () => number, run: (item: T) => Promise<unknown>, stopped: () => boolean = () => false): Promise<void> {
  let exhausted = false;
  let busy = 0;
  let failure: { error: unknown } | undefined;
  const running: Array<Promise<void>> = [];
  const more = () => !exhausted && !stopped() && !failure;
  const lane = async (): Promise<void> => {
    busy++;
    try {
      while (more()) {
        // Taken only now, so that a chunk's size is read when its lane is free for it.
        const item = take();
        if (item === undefined) {
          exhausted = true;
          return;
        }
        await run(item);
        const wanted = lanes();
        if (busy > wanted) return;
        while (busy < wanted && more()) start();
      }
    } catch (error) {
      failure ??= { error };
    } finally {
      busy--;
    }
  };
  const start = () => void running.push(lane());
  // A lane takes its first item (or finds none) before it yields, so each start here takes one.
  while (busy < lanes() && more()) start();
  // Lanes started meanwhile are pushed onto the array, so this waits for them too.
  for (let i = 0; i < running.length; i++) await running[i];
  if (failure) throw failure.error;
}

/** The items one at a time, for inLanes. */
export function inTurn<T>(items: readonly T[]): () => T | undefined {
  let at = 0;
  return () => (at < items.length ? items[at++] : undefined);
}

/** The items in chunks of `size()` (read again for each chunk), for inLanes. */
export function inChunks<T>(items: readonly T[], size: () => number): () => T[] | undefined {
  let at = 0;
  return () => (at < items.length ? items.slice(at, (at += size())) : undefined);
}

/**
 * The items in chunks of `size()` for inLanes, as inChunks cuts them, except that the items of
 * one stream (`streamOf` names it; undefined for an item of none) never run side by side in
 * two lanes: each stream goes whole into one unit, which its lane applies chunk after chunk,
 * in the items' order. A unit is one chunk, filled in the items' order with items of no
 * stream and with whole streams that fit in the room left; or a stream longer than that room,
 * alone, in as many chunks as it needs.
 */
export function inStreams<T>(items: readonly T[], size: () => number, streamOf: (item: T) => string | undefined): () => T[][] | undefined {
  // Each item's stream as the positions of its items, in order; an item of none is a stream of one.
  const streams = new Map<string, number[]>();
  const streamAt = items.map((item, index) => {
    const key = streamOf(item);
    if (key === undefined) return [index];
    let stream = streams.get(key);
    if (!stream) streams.set(key, (stream = []));
    stream.push(index);
    return stream;
  });
  const taken = new Array<boolean>(items.length).fill(false);
  let first = 0;
  return () => {
    while (first < items.length && taken[first]) first++;
    if (first === items.length) return undefined;
    const room = size();
    const chunk: T[] = [];
    for (let at = first; at < items.length && chunk.length < room; at++) {
      if (taken[at]) continue;
      const stream = streamAt[at];
      if (stream.length > room - chunk.length && chunk.length) continue;
      for (const index of stream) taken[index] = true;
      const streamItems = stream.map((index) => items[index]);
      // Longer than a chunk: this stream alone, chunk after chunk.
      if (stream.length > room) return Array.from({ length: Math.ceil(stream.length / room) }, (_, n) => streamItems.slice(n * room, (n + 1) * room));
      chunk.push(...streamItems);
    }
    return [chunk];
  };
}
