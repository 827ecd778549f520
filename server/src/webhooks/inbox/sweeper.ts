import type { Deps } from '../../deps.ts';
import { webhookJobs } from '../../jobs.ts';
import { inTransaction } from '../../lib/queue.ts';
import { lockStale, markEnqueued } from './repo.ts';

/** Older than this, an entry still 'received' has most likely lost its job. */
const SWEEP_AFTER_MS = 10_000;
const SWEEP_INTERVAL_MS = 10_000;
const SWEEP_BATCH = 500;

/**
 * Hands to the queue the inbox entries still 'received' a while after they arrived or were
 * last enqueued. Their job may have been lost (deleted, archived, a queue purged by hand) or
 * may belong to a worker that died mid-batch and still looks 'active'. An entry never given a
 * job waits that long only behind a backlog, or because applying it kills the process each
 * time (a crash rolls back its transaction, so no attempt is counted): once it has a job,
 * the queue's retry limit ends that as a dead entry. Rows are marked enqueued with their jobs,
 * in one transaction, so that the dispatcher's lanes leave them to the queue. Re-inserting is
 * safe: the job id is the entry id, so an existing job (waiting for its retry, say) makes it
 * a no-op, and processing is idempotent anyway. Returns how many entries were looked at.
 */
export async function sweepInbox(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - SWEEP_AFTER_MS);
  // Hands jobs of dead workers back (pg-boss does this itself only every few minutes).
  await deps.queue.expire();
  return deps.db.transaction(async (tx) => {
    const ids = await lockStale(tx, cutoff, SWEEP_BATCH);
    if (!ids.length) return 0;
    await deps.queue.insert(webhookJobs(ids), inTransaction(tx));
    await markEnqueued(tx, ids, deps.clock.now());
    return ids.length;
  });
}

/**
 * Sweeps at start (a previous process may have died mid-batch) and then every few seconds.
 * `firstSweep` settles when the first is done (it never rejects): the worker starts applying
 * waiting rows after it, so that rows already past the cutoff at a restart (one of them may
 * have killed the process before it) go to the queue, not straight back to a lane.
 */
export function startInboxSweeper(deps: Deps, intervalMs = SWEEP_INTERVAL_MS): { firstSweep: Promise<void>; stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const sweep = () => {
    // One sweep at a time: a slow one must not pile up behind itself.
    return (running ??= sweepInbox(deps)
      .then(
        (count) => {
          if (count) deps.logger.debug({ count }, 'inbox sweep re-enqueued entries still received');
        },
        (error) => deps.logger.warn({ err: error }, 'inbox sweep failed'),
      )
      .finally(() => (running = undefined)));
  };
  const firstSweep = sweep();
  const timer = setInterval(sweep, intervalMs);
  timer.unref();
  return {
    firstSweep,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
