import type { Deps } from '../../deps.ts';
import { webhookJobs } from '../../jobs.ts';
import { inTransaction } from '../../lib/queue.ts';
import { lockUndispatched, markEnqueued } from './repo.ts';

/** A worker on its own polls for the rows gateway processes keep this often. */
const DISPATCH_INTERVAL_MS = 100;
/**
 * Beside the gateway (`npm start`), each commit of new rows wakes the dispatcher (deps.inboxKept),
 * and it polls only for rows no commit of this process announced: kept by another process, or
 * before a crash. Idle, that is one query a second instead of ten. Under load, dispatches
 * still start at most every DISPATCH_INTERVAL_MS, so each takes a batch of rows as before.
 */
const DISPATCH_INTERVAL_BESIDE_GATEWAY_MS = 1_000;
const DISPATCH_BATCH = 1000;

/**
 * Turns newly kept deliveries into pg-boss jobs, in transactions that insert the jobs and
 * mark the rows together. The gateway only commits inbox rows (one statement per group of
 * deliveries), so its answer costs one round trip; the jobs are made here, a thousand at a
 * time. SKIP LOCKED lets several workers dispatch side by side without doing a row twice.
 * Returns how many rows it dispatched.
 */
export async function dispatchInbox(deps: Pick<Deps, 'db' | 'queue' | 'clock'>): Promise<number> {
  return deps.db.transaction(async (tx) => {
    const ids = await lockUndispatched(tx, DISPATCH_BATCH);
    if (!ids.length) return 0;
    await deps.queue.insert(webhookJobs(ids), inTransaction(tx));
    await markEnqueued(tx, ids, deps.clock.now());
    return ids.length;
  });
}

/** While dispatch keeps failing (the database is away, say), tries are spaced up to this. */
const DISPATCH_MAX_BACKOFF_MS = 5_000;
/** A failing streak is logged when it starts, then at most this often, and when it ends. */
const FAILURE_LOG_INTERVAL_MS = 30_000;

/** How long the dispatcher waits after its `failures`-th failure in a row before it tries again. */
export function dispatchRetryDelayMs(failures: number): number {
  return Math.min(DISPATCH_INTERVAL_MS * 2 ** failures, DISPATCH_MAX_BACKOFF_MS);
}

/**
 * Dispatches at every poll, whenever the gateway in this process keeps new rows, and again at
 * once while batches come back full; `onDispatched` wakes the webhook worker so that new jobs
 * do not wait for its next poll.
 * After a failure the next try waits twice as long each time, up to DISPATCH_MAX_BACKOFF_MS,
 * so that an outage costs neither a flood of log lines nor a connection attempt per tick.
 * (Timing is the process's own monotonic clock: it paces work, it dates nothing.)
 */
export function startInboxDispatcher(deps: Deps, onDispatched: () => void, options: { besideGateway: boolean }): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  /** A wake-up came while a dispatch ran: its rows may have missed that dispatch's look. */
  let again = false;
  let stopped = false;
  /** When the last dispatch started, and the wake-up waiting for DISPATCH_INTERVAL_MS after it. */
  let startedAt = -Infinity;
  let wakeTimer: NodeJS.Timeout | undefined;
  let failures = 0;
  let retryAt = 0;
  let loggedAt = -Infinity;
  const onFailure = (error: unknown) => {
    failures++;
    const now = performance.now();
    retryAt = now + dispatchRetryDelayMs(failures);
    if (failures === 1 || now - loggedAt >= FAILURE_LOG_INTERVAL_MS) {
      loggedAt = now;
      deps.logger.warn({ err: error, failures }, 'inbox dispatch failed; trying again with backoff');
    }
  };
  const onSuccess = () => {
    if (failures) deps.logger.info({ failures }, 'inbox dispatch works again');
    failures = 0;
  };
  const dispatch = () => {
    if (stopped || performance.now() < retryAt) return;
    if (running) {
      again = true;
      return;
    }
    again = false;
    startedAt = performance.now();
    running = (async () => {
      let count: number;
      do {
        count = await dispatchInbox(deps);
        if (count) onDispatched();
      } while (count === DISPATCH_BATCH && !stopped);
    })()
      .then(onSuccess, onFailure)
      .finally(() => {
        running = undefined;
        if (again) dispatch();
      });
  };
  const timer = setInterval(dispatch, options.besideGateway ? DISPATCH_INTERVAL_BESIDE_GATEWAY_MS : DISPATCH_INTERVAL_MS);
  timer.unref();
  const wake = () => {
    const wait = startedAt + DISPATCH_INTERVAL_MS - performance.now();
    if (wait <= 0) return dispatch();
    wakeTimer ??= setTimeout(() => {
      wakeTimer = undefined;
      dispatch();
    }, wait);
  };
  const unlisten = deps.inboxKept.listen(wake);
  dispatch();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(wakeTimer);
      unlisten();
      await running;
    },
  };
}
