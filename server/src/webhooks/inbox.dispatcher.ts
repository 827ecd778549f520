import type { Deps } from '../deps.ts';
import { txDb, webhookJobs } from './inbox.ts';

export const DISPATCH_INTERVAL_MS = 100;
const DISPATCH_BATCH = 1000;

const UNDISPATCHED = {
  name: 'webhook_inbox_undispatched',
  text: `SELECT id FROM webhook_inbox WHERE state = 'received' AND enqueued_at IS NULL
         ORDER BY received_at LIMIT ${DISPATCH_BATCH} FOR UPDATE SKIP LOCKED`,
};
const MARK_ENQUEUED = {
  name: 'webhook_inbox_enqueued',
  text: 'UPDATE webhook_inbox SET enqueued_at = $2 WHERE id = ANY($1::uuid[])',
};

/**
 * Turns newly kept deliveries into pg-boss jobs, in transactions that insert the jobs and
 * mark the rows together. The gateway only commits inbox rows (one statement per group of
 * deliveries), so its answer costs one round trip; the jobs are made here, a thousand at a
 * time. SKIP LOCKED lets several workers dispatch side by side without doing a row twice.
 * Returns how many rows it dispatched.
 */
export async function dispatchInbox(deps: Pick<Deps, 'db' | 'queue' | 'clock'>): Promise<number> {
  return deps.db.transaction(async (tx) => {
    const rows = await tx.query<{ id: string }>(UNDISPATCHED);
    if (!rows.length) return 0;
    const ids = rows.map((row) => row.id);
    await deps.queue.insert(webhookJobs(ids), txDb(tx));
    await tx.query(MARK_ENQUEUED, [ids, deps.clock.now()]);
    return ids.length;
  });
}

/**
 * Dispatches every DISPATCH_INTERVAL_MS, and again at once while batches come back full;
 * `onDispatched` wakes the webhook worker so that new jobs do not wait for its next poll.
 */
export function startInboxDispatcher(deps: Deps, onDispatched: () => void): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let stopped = false;
  const dispatch = () => {
    running ??= (async () => {
      let count: number;
      do {
        count = await dispatchInbox(deps);
        if (count) onDispatched();
      } while (count === DISPATCH_BATCH && !stopped);
    })()
      .catch((error) => deps.logger.warn({ err: error }, 'inbox dispatch failed; retrying on the next tick'))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(dispatch, DISPATCH_INTERVAL_MS);
  timer.unref();
  dispatch();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
