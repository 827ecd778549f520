import type { Deps } from '../../deps.ts';
import { QUEUES, webhookRetryJobs } from '../../jobs.ts';
import type { Queryable } from '../../lib/db.ts';
import { inTransaction } from '../../lib/queue.ts';
import { inLanes, inStreams, type LanePolicy } from '../../lib/lanes.ts';
import { providerNamed } from '../registry.ts';
import { applyWaitingEntries, processEachAlone } from './processor.ts';
import { lockUndispatchedAmong, markEnqueued, rowsAmong, waitingRows, type RowScope } from './repo.ts';

// The first attempt at every kept delivery is made here, straight from the inbox: a look
// finds the oldest waiting rows, a thousand at most, and each chunk of them is applied in a
// transaction that locks its rows (skipping those another worker holds), applies them,
// records their outcomes and commits. The inbox row is the queue: no job is made for a
// delivery that applies at its first attempt. One that fails gets a pg-boss job, and the
// queue's retries with backoff and its dead-letter queue take it from there
// (roles/worker.ts), as they do for replays and for rows the sweeper finds. A job per
// delivery (made, fetched, completed: three writes to the job table, and one to mark the
// row) took 20% of PostgreSQL's statement time while the worker applied a burst; without it
// a burst of payments applied twice as fast (docs/BENCHMARKS.md). A crash mid-transaction
// rolls it back: the rows wait again, and the next look finds them.

/** A worker on its own polls for the rows gateway processes keep this often. */
const DISPATCH_INTERVAL_MS = 100;
/**
 * Beside the gateway (`npm start`), each commit of new rows wakes the dispatcher (deps.inboxKept),
 * and it polls only for rows no commit of this process announced: kept by another process, or
 * before a crash. Idle, that is one query a second instead of ten. Under load, dispatches
 * still start at most every DISPATCH_INTERVAL_MS, so each takes what arrived meanwhile.
 */
const DISPATCH_INTERVAL_BESIDE_GATEWAY_MS = 1_000;
/** Rows found by one look (inbox/repo.ts, waitingRows, says why a look serves many chunks). */
const LOOK_BATCH = 1_000;

export type DispatcherOptions = {
  /** True when the gateway runs in the same process (`npm start`). */
  besideGateway: boolean;
  /** How many transactions run at once, and how many rows each applies (lib/lanes.ts). */
  lanes: LanePolicy;
};

/**
 * A chunk of waiting rows applied in one transaction, those of a stream another worker is
 * applying left out (applyWaitingEntries; `streamOf` names each row's). If applying them
 * failed, nothing was applied, and each is tried on its own so that only those that fail
 * wait for the queue's retry. Returns how many rows it took (those another transaction held
 * are left to it) and the streams it left out.
 */
export async function applyWaitingChunk(deps: Deps, inboxIds: string[], streamOf?: (id: string) => string | undefined): Promise<{ taken: number; busy: Set<string> }> {
  const { taken, busy, failed, error } = await applyWaitingEntries(deps, inboxIds, streamOf);
  if (failed) {
    await processEachAlone(deps, taken, error, async (index, cause) => {
      const message = cause instanceof Error ? cause.message : String(cause);
      deps.logger.warn({ queue: QUEUES.webhook, inboxId: taken[index], error: message }, 'webhook effect failed; the queue will retry it');
      deps.metrics.countJobFailure(QUEUES.webhook);
      await handToQueue(deps, [taken[index]]);
    });
  }
  return { taken: taken.length, busy };
}

/**
 * Jobs for those of `inboxIds` still waiting without one, due after the queue's first retry
 * delay, with each row marked in the same transaction so that no lane takes it again.
 * Returns how many it made.
 */
export async function handToQueue(deps: Pick<Deps, 'db' | 'queue' | 'clock'>, inboxIds: string[]): Promise<number> {
  return deps.db.transaction(async (tx) => {
    const ids = await lockUndispatchedAmong(tx, inboxIds);
    if (!ids.length) return 0;
    await deps.queue.insert(webhookRetryJobs(ids), inTransaction(tx));
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
 * Applies waiting rows at every poll and whenever the gateway in this process keeps new ones,
 * chunk after chunk while they come back full (applyWaiting).
 * After a failure the next try waits twice as long each time, up to DISPATCH_MAX_BACKOFF_MS,
 * so that an outage costs neither a flood of log lines nor a connection attempt per tick.
 * (Timing is the process's own monotonic clock: it paces work, it dates nothing.)
 */
export function startInboxDispatcher(deps: Deps, options: DispatcherOptions): { stop(): Promise<void> } {
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
    deps.metrics.countDispatchFailure();
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
    running = applyWaiting(deps, options.lanes, () => stopped)
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

/**
 * The stream a waiting row belongs to, for a provider whose deliveries take effect in the
 * order they arrived (a channel's messages): its provider and scope, as the name of the
 * lock that a transaction applying its rows holds. Other rows have none.
 */
export function streamOf(row: RowScope): string | undefined {
  return providerNamed(row.provider)?.inArrivalOrder ? `inbox-stream:${row.provider}:${row.scope}` : undefined;
}

/** The stream of each of these rows that has one (streamOf), by row id. */
function streamsOfRows(rows: RowScope[]): Map<string, string> {
  const streams = new Map<string, string>();
  for (const row of rows) {
    const stream = streamOf(row);
    if (stream) streams.set(row.id, stream);
  }
  return streams;
}

/** The stream of each of these inbox rows that has one (streamOf), by row id. */
export async function streamsOf(db: Queryable, inboxIds: string[]): Promise<Map<string, string>> {
  return streamsOfRows(await rowsAmong(db, inboxIds));
}

/**
 * Looks for waiting rows and applies them, a chunk per transaction, looking again at once
 * while a look comes back full. The chunks of a look run in one lane, or in as many as the
 * lane policy gives while looks keep coming back full. The rows of one stream (streamOf) go
 * to one lane, in the order they arrived (lib/lanes.ts, inStreams), and a chunk's
 * transaction holds its streams' locks: while another worker's transaction holds one, its
 * rows are left to that worker, and so is the rest of a stream too long for one chunk. So
 * two workers never apply one stream's rows side by side either. A row whose effect fails
 * goes to the queue's retry, and those after it in its stream go on without it.
 */
export async function applyWaiting(deps: Deps, policy: LanePolicy, stopped: () => boolean = () => false): Promise<void> {
  while (!stopped()) {
    const rows = await waitingRows(deps.db, LOOK_BATCH);
    policy.fetched(rows.length === LOOK_BATCH);
    const streams = streamsOfRows(rows);
    await inLanes(
      inStreams(rows, policy.perTransaction, (row) => streams.get(row.id)),
      policy.lanes,
      async (chunks) => {
        for (const chunk of chunks) {
          if (stopped()) return;
          const { busy } = await applyWaitingChunk(deps, chunk.map((row) => row.id), (id) => streams.get(id));
          if (busy.size) return;
        }
      },
      stopped,
    );
    if (rows.length < LOOK_BATCH) return;
  }
}
