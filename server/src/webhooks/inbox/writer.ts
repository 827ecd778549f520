import type { Deps } from '../../deps.ts';
import { isDatabaseUnavailable, type Db, type Queryable } from '../../lib/db.ts';
import { createGroupCommit } from '../../lib/group-commit.ts';
import { uuidv7 } from '../../lib/uuid7.ts';
import { insertDeliveries, type InboxDelivery } from './repo.ts';

const deliveryKey = (d: InboxDelivery) => `${d.provider}\u0000${d.scope}\u0000${d.externalId}`;

export type InboxWriter = {
  /** Resolves once the delivery is committed (or was already kept); rejects if it could not be. */
  write(delivery: InboxDelivery): Promise<{ duplicate: boolean }>;
};

export type InboxWriterOptions = { maxBatch?: number; maxBatchBytes?: number; maxInFlight?: number };

/** What the writer uses of the service's deps: its statements need only a connection that queries. */
export type InboxWriterDeps = Pick<Deps, 'clock' | 'inboxKept'> & { db: Queryable & Pick<Db, 'embedded'> };

/**
 * Deliveries are kept by group commit (lib/group-commit.ts): under load one multi-row
 * INSERT serves hundreds of them, and every caller is answered only after the commit that
 * holds its row, so a 200 always means "durable". The embedded database has one
 * connection, so there one commit runs at a time; on a server a few overlap, which hides
 * each one's round trips behind the others.
 */
export function createInboxWriter(deps: InboxWriterDeps, options: InboxWriterOptions = {}): InboxWriter {
  async function commit(batch: InboxDelivery[]): Promise<Array<{ duplicate: boolean }>> {
    // One row per key: the same delivery twice in a batch is a retry racing its original.
    const firstByKey = new Map<string, InboxDelivery & { id: string }>();
    for (const delivery of batch) {
      const key = deliveryKey(delivery);
      // Time-ordered ids, in the order the deliveries came (lib/uuid7.ts).
      if (!firstByKey.has(key)) firstByKey.set(key, { ...delivery, id: uuidv7() });
    }
    // Overlapping commits take the unique-key locks in one order, so they cannot deadlock.
    const rows = [...firstByKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    const inserted = await insertDeliveries(deps.db, rows, deps.clock.now());
    if (inserted.size) deps.inboxKept.notify();
    const answered = new Set<string>();
    return batch.map((delivery) => {
      const key = deliveryKey(delivery);
      const isNew = inserted.has(firstByKey.get(key)!.id) && !answered.has(key);
      answered.add(key);
      return { duplicate: !isNew };
    });
  }
  const write = createGroupCommit(commit, {
    maxBatch: options.maxBatch ?? 500,
    // Payloads travel as one parameter (inbox/repo.ts); this keeps a statement to 8 MiB or so.
    // A batch always takes one, however large: the route has already capped its size.
    weigh: (delivery) => delivery.payload.length,
    maxBatchWeight: options.maxBatchBytes ?? 8 * 1024 * 1024,
    maxInFlight: options.maxInFlight ?? (deps.db.embedded ? 1 : 2),
    // Intake checks what it keeps (intake.ts), but a row the database refuses for a reason
    // of its own must fail its own delivery only, never the others that shared its commit.
    splitOnFailure: (error) => !isDatabaseUnavailable(error),
  });
  return { write };
}
