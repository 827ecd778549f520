/**
 * Group commit: items handed in while a slot is free go at once; items that arrive while
 * every slot is busy wait and then go together in the next batch. Under load the batches
 * grow by themselves, so one statement (and one fsync) serves hundreds of items, and at low
 * load nothing waits. Each caller's promise settles with its own item's result, after the
 * batch that holds it. A failed batch rejects every caller in it, unless `splitOnFailure`
 * says the failure may be one item's (a value the database refuses): then its halves are
 * committed apart, down to the one item, so a bad item fails alone and the others are kept.
 */
export type GroupCommitOptions<T> = {
  /** Items per batch at most. */
  maxBatch: number;
  /** Batches under way at once: 1 on a single connection, a few on a pool to hide round trips. */
  maxInFlight: number;
  /** An item's weight toward `maxBatchWeight` (bytes, say); a batch always takes at least one. */
  weigh?(item: T): number;
  maxBatchWeight?: number;
  /** Whether a failed batch of several items may have failed for one of them (not, say, for a database that is down). */
  splitOnFailure?(error: unknown): boolean;
};

export function createGroupCommit<T, R>(commit: (items: T[]) => Promise<R[]>, options: GroupCommitOptions<T>): (item: T) => Promise<R> {
  type Waiting = { item: T; resolve(result: R): void; reject(error: unknown): void };
  const pending: Waiting[] = [];
  let inFlight = 0;

  function takeBatch(): Waiting[] {
    let weight = 0;
    let count = 0;
    while (count < pending.length && count < options.maxBatch) {
      weight += options.weigh?.(pending[count].item) ?? 0;
      if (count > 0 && options.maxBatchWeight !== undefined && weight > options.maxBatchWeight) break;
      count++;
    }
    return pending.splice(0, count);
  }

  async function run(batch: Waiting[]): Promise<void> {
    try {
      const results = await commit(batch.map((waiting) => waiting.item));
      batch.forEach((waiting, index) => waiting.resolve(results[index]));
    } catch (error) {
      if (batch.length > 1 && options.splitOnFailure?.(error)) {
        const half = Math.ceil(batch.length / 2);
        await run(batch.slice(0, half));
        await run(batch.slice(half));
        return;
      }
      for (const waiting of batch) waiting.reject(error);
    }
  }

  /** Runs in each busy slot: commits what is waiting until nothing is. */
  async function drain(): Promise<void> {
    inFlight++;
    try {
      while (pending.length) await run(takeBatch());
    } finally {
      inFlight--;
    }
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      if (inFlight < options.maxInFlight) void drain();
    });
}
