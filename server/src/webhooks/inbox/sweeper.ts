import type { Deps } from '../../deps.ts';
import { webhookJobs } from '../../jobs.ts';
import { staleIds } from './repo.ts';

/** Older than this, an entry still 'received' has most likely lost its job. */
const SWEEP_AFTER_MS = 10_000;
const SWEEP_INTERVAL_MS = 10_000;
const SWEEP_BATCH = 500;

/**
 * Re-enqueues inbox entries that are still 'received' a while after they arrived. Their
 * job may have been lost (deleted, archived, a queue purged by hand) or may belong to a
 * worker that died mid-batch and still looks 'active'. Re-inserting is safe: the job id
 * is the entry id, so an existing job (waiting for its retry, say) makes it a no-op, and
 * processing is idempotent anyway. Returns how many entries were looked at.
 */
export async function sweepInbox(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - SWEEP_AFTER_MS);
  const ids = await staleIds(deps.db, cutoff, SWEEP_BATCH);
  if (!ids.length) return 0;
  // Hands jobs of dead workers back (pg-boss does this itself only every few minutes).
  await deps.queue.expire();
  await deps.queue.insert(webhookJobs(ids));
  return ids.length;
}

/** Sweeps at start (a previous process may have died mid-batch) and then every few seconds. */
export function startInboxSweeper(deps: Deps, intervalMs = SWEEP_INTERVAL_MS): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const sweep = () => {
    // One sweep at a time: a slow one must not pile up behind itself.
    running ??= sweepInbox(deps)
      .then(
        (count) => {
          if (count) deps.logger.debug({ count }, 'inbox sweep re-enqueued entries still received');
        },
        (error) => deps.logger.warn({ err: error }, 'inbox sweep failed'),
      )
      .finally(() => (running = undefined));
  };
  sweep();
  const timer = setInterval(sweep, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
