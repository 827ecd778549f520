import type { Deps } from '../deps.ts';
import { runHousekeeping } from './housekeeping.ts';
import { QUEUES, type PasswordResetJob, type WebhookJob } from '../jobs.ts';
import type { PgBoss } from '../lib/queue.ts';
import { adminAddresses } from '../modules/accounts/index.ts';
import { endpointDisabledNotice, startEventSender } from '../modules/events/index.ts';
import { sendResetLink } from '../modules/passwords/index.ts';
import { sendOperatorMessage, type OperatorMessage } from '../modules/notifications/index.ts';
import { startInboxDispatcher, streamsOf } from '../webhooks/inbox/dispatcher.ts';
import { markDead, processEachAlone, processInboxEntries } from '../webhooks/inbox/processor.ts';
import { startInboxSweeper } from '../webhooks/inbox/sweeper.ts';
import { createLanePolicy, inLanes, inStreams, inTurn, type LanePolicy } from '../lib/lanes.ts';

export type Worker = { stop(): Promise<void> };

const POLLING_INTERVAL_SECONDS = 0.5;
const WEBHOOK_BATCH = 100;
const SEND_BATCH = 10;
/** Deliveries kept by this process's gateway within this long mean a burst is under way. */
const ARRIVING_MS = 250;
/** Full batches for this long mean a backlog that one lane does not work off (lib/lanes.ts). */
const BACKLOG_MS = 2_000;

export type WorkerOptions = {
  /** True when the gateway runs in the same process (`npm start`). */
  withGateway: boolean;
};

/** Processes queued jobs (webhook effects, notifications), sends events out, and runs housekeeping. */
export async function startWorker(deps: Deps, options: WorkerOptions): Promise<Worker> {
  const { queue, logger } = deps;
  // How many chunks at once, and how many entries a chunk's transaction takes (lib/lanes.ts).
  // The first attempts taken from the inbox and the queue's jobs (retries, replays) each have
  // their own lanes: a backlog is one of either, and a short batch of retries must not read as
  // the end of a backlog of first attempts.
  const lanePolicy = () => createLanePolicy({ embedded: deps.db.embedded, arrivingMs: ARRIVING_MS, backlogMs: BACKLOG_MS });
  const lanes = lanePolicy();
  const inboxLanes = lanePolicy();
  const arrived = () => {
    lanes.arrived();
    inboxLanes.arrived();
  };
  const unlisten = options.withGateway ? deps.inboxKept.listen(arrived) : () => {};

  const handlers = createHandlerTracker();

  /**
   * queue.work, except that a batch that came back full is followed by the next fetch at once
   * rather than after the polling interval: a backlog (a burst of deliveries, a thousand
   * reset mails) drains at the handlers' pace, not at a batch per interval.
   */
  const workThrough = async <T extends object>(name: string, batchSize: number, handle: (jobs: Array<PgBoss.Job<T>>) => Promise<void>) => {
    let id = '';
    id = await queue.work<T>(
      name,
      { batchSize, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS },
      handlers.track(async (jobs) => {
        await handle(jobs);
        if (jobs.length === batchSize && id) queue.notifyWorker(id);
      }),
    );
    return id;
  };

  await workThrough<WebhookJob>(QUEUES.webhook, WEBHOOK_BATCH, (jobs) => {
    lanes.fetched(jobs.length === WEBHOOK_BATCH);
    return applyWebhookJobs(deps, jobs, lanes);
  });
  await queue.work<WebhookJob>(
    QUEUES.webhookDead,
    { pollingIntervalSeconds: 2 },
    handlers.track(async (jobs) => {
      for (const job of jobs) await markDead(deps, job.data.inboxId);
    }),
  );
  await workThrough<OperatorMessage>(QUEUES.telegramSend, SEND_BATCH, (jobs) =>
    inLanes(inTurn(jobs), () => SEND_BATCH, async (job) => {
      await sendOperatorMessage(deps, job.data).catch((error) => failJob(deps, QUEUES.telegramSend, job.id, error));
    }),
  );
  await workThrough<PasswordResetJob>(QUEUES.passwordReset, SEND_BATCH, (jobs) =>
    inLanes(inTurn(jobs), () => SEND_BATCH, async (job) => {
      await sendResetLink(deps, job.data.email).catch((error) => failJob(deps, QUEUES.passwordReset, job.id, error));
    }),
  );
  await queue.work<OperatorMessage>(QUEUES.telegramDead, { pollingIntervalSeconds: 2 }, async (jobs) => {
    for (const job of jobs) logger.error({ chatId: job.data.chatId }, 'operator message not delivered after retries');
  });

  const sweeper = startInboxSweeper(deps);
  await sweeper.firstSweep;
  const dispatcher = startInboxDispatcher(deps, { besideGateway: options.withGateway, lanes: inboxLanes });
  const events = startEventSender(deps, {
    onOutcome: (type, outcome) => deps.metrics.countEventDelivery(type, outcome),
    async onEndpointDisabled(endpoint) {
      for (const admin of await adminAddresses(deps.db)) deps.mailer.sendInBackground(endpointDisabledNotice(admin.email, admin.name, endpoint, deps.config.publicUrl));
    },
  });
  const cleanup = setInterval(() => {
    runHousekeeping(deps).catch((error) => deps.logger.warn({ err: error }, 'housekeeping failed'));
  }, 60_000);
  cleanup.unref();
  return {
    async stop() {
      clearInterval(cleanup);
      unlisten();
      await dispatcher.stop();
      await sweeper.stop();
      await events.stop();
      for (const name of Object.values(QUEUES)) await queue.offWork(name);
      await handlers.drain();
    },
  };
}

/**
 * A batch of webhook jobs (retries, replays, rows the sweeper found) applied in chunks, in as
 * many lanes at once as the policy gives; the jobs of a channel's rows all in one lane, in
 * the order of the batch (inbox/dispatcher.ts, streamOf), as the dispatcher applies them.
 * pg-boss hands jobs out in id order, and a job's id is its row's (UUID v7, made in the
 * order the deliveries came) or, for a replay, made in the order the replay took the rows.
 */
export async function applyWebhookJobs(deps: Deps, jobs: Array<PgBoss.Job<WebhookJob>>, policy: Pick<LanePolicy, 'lanes' | 'perTransaction'>): Promise<void> {
  const streams = await streamsOf(deps.db, jobs.map((job) => job.data.inboxId));
  await inLanes(
    inStreams(jobs, policy.perTransaction, (job) => streams.get(job.data.inboxId)),
    policy.lanes,
    async (chunks) => {
      for (const chunk of chunks) await processWebhookChunk(deps, chunk);
    },
  );
}

/**
 * The common case is one transaction for the chunk. If anything in it fails, nothing was
 * applied, and each job is run on its own so that only the failing one is retried.
 */
async function processWebhookChunk(deps: Deps, jobs: Array<PgBoss.Job<WebhookJob>>): Promise<void> {
  const inboxIds = jobs.map((job) => job.data.inboxId);
  try {
    await processInboxEntries(deps, inboxIds);
  } catch (error) {
    await processEachAlone(deps, inboxIds, error, (index, cause) => failJob(deps, QUEUES.webhook, jobs[index].id, cause));
  }
}

/**
 * pg-boss completes or fails a whole batch together; a job failed here is retried on its
 * own with backoff, and the rest complete with the batch (completion skips failed jobs).
 */
async function failJob(deps: Deps, name: string, jobId: string, error: unknown): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  deps.logger.warn({ queue: name, jobId, error: message }, 'job failed; it will be retried');
  deps.metrics.countJobFailure(name);
  await deps.queue.fail(name, jobId, { message });
}

/**
 * pg-boss's offWork returns before the handlers it stopped have finished, and a fetch already
 * under way can still hand over jobs: the database must not close under either. After drain,
 * a late batch is failed (pg-boss retries it later), never completed unprocessed.
 */
function createHandlerTracker() {
  const running = new Set<Promise<void>>();
  let draining = false;
  return {
    track<T>(handler: (jobs: T) => Promise<void>): (jobs: T) => Promise<void> {
      return (jobs) => {
        if (draining) return Promise.reject(new Error('worker is stopping; the jobs will be retried'));
        const run = handler(jobs);
        running.add(run);
        run.then(
          () => running.delete(run),
          () => running.delete(run),
        );
        return run;
      };
    },
    async drain(): Promise<void> {
      draining = true;
      await Promise.allSettled([...running]);
    },
  };
}
