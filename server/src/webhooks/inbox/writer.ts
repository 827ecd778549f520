import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { insertDeliveries, type InboxDelivery } from './repo.ts';

const deliveryKey = (d: InboxDelivery) => `${d.provider}\u0000${d.scope}\u0000${d.externalId}`;

export type InboxWriter = {
  /** Resolves once the delivery is committed (or was already kept); rejects if it could not be. */
  write(delivery: InboxDelivery): Promise<{ duplicate: boolean }>;
};

type Waiting = {
  delivery: InboxDelivery;
  resolve(result: { duplicate: boolean }): void;
  reject(error: unknown): void;
};

export type InboxWriterOptions = { maxBatch?: number; maxBatchBytes?: number; maxInFlight?: number };

/**
 * Group commit. A delivery that arrives while a commit slot is free is committed at once;
 * deliveries that arrive while every slot is busy wait and then go together in the next
 * transaction. Under load the batches grow by themselves, so one fsync serves hundreds of
 * deliveries, and at low load nothing waits. Every caller is answered only after the
 * commit that holds its row, so a 200 always means "durable". The embedded database has
 * one connection, so there one commit runs at a time; on a server a few overlap, which
 * hides each one's round trips behind the others.
 */
export function createInboxWriter(deps: Pick<Deps, 'db' | 'clock'>, options: InboxWriterOptions = {}): InboxWriter {
  const maxBatch = options.maxBatch ?? 500;
  // Payloads travel hex-encoded in one array literal; this keeps a statement to tens of MiB.
  const maxBatchBytes = options.maxBatchBytes ?? 8 * 1024 * 1024;
  const maxInFlight = options.maxInFlight ?? (deps.db.embedded ? 1 : 2);
  const pending: Waiting[] = [];
  let inFlight = 0;

  function takeBatch(): Waiting[] {
    let bytes = 0;
    let count = 0;
    while (count < pending.length && count < maxBatch) {
      bytes += pending[count].delivery.payload.length;
      // Always take at least one, however large: the route has already capped its size.
      if (count > 0 && bytes > maxBatchBytes) break;
      count++;
    }
    return pending.splice(0, count);
  }

  async function commit(batch: Waiting[]): Promise<void> {
    // One row per key: the same delivery twice in a batch is a retry racing its original.
    const firstByKey = new Map<string, InboxDelivery & { id: string }>();
    for (const { delivery } of batch) {
      const key = deliveryKey(delivery);
      if (!firstByKey.has(key)) firstByKey.set(key, { ...delivery, id: randomUUID() });
    }
    // Overlapping commits take the unique-key locks in one order, so they cannot deadlock.
    const rows = [...firstByKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    try {
      const inserted = await insertDeliveries(deps.db, rows, deps.clock.now());
      const answered = new Set<string>();
      for (const waiting of batch) {
        const key = deliveryKey(waiting.delivery);
        const isNew = inserted.has(firstByKey.get(key)!.id) && !answered.has(key);
        answered.add(key);
        waiting.resolve({ duplicate: !isNew });
      }
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }

  /** Runs in each busy slot: commits what is waiting until nothing is. */
  async function drain(): Promise<void> {
    inFlight++;
    try {
      while (pending.length) await commit(takeBatch());
    } finally {
      inFlight--;
    }
  }

  return {
    write(delivery) {
      return new Promise((resolve, reject) => {
        pending.push({ delivery, resolve, reject });
        if (inFlight < maxInFlight) void drain();
      });
    },
  };
}
