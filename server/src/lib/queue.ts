import { createRequire } from 'node:module';
import PgBoss from 'pg-boss';
import type { Db } from './db.ts';
import type { Logger } from './logger.ts';

export type { PgBoss };

/** Queue names and their retry policy, created idempotently at start. */
export const QUEUES = {
  webhook: 'webhook-process',
  webhookDead: 'webhook-dead',
  telegramSend: 'telegram-send',
  telegramDead: 'telegram-dead',
} as const;

/** The payload of a webhook-process job; the job id is the inbox row id as well. */
export type WebhookJob = { inboxId: string };

/**
 * Webhook effects are idempotent (row lock + state check), so a short expiry is safe: a job
 * whose worker died is handed out again after 15 s instead of pg-boss's default 15 minutes.
 * A Bot API call is not idempotent, so its expiry is well above the 10 s request timeout.
 * Backoff: pg-boss waits retryDelay * 2^n (randomised up to twice that) before try n+1,
 * so 8 webhook retries span roughly 8 to 17 minutes before the row is marked dead.
 */
const QUEUE_OPTIONS: PgBoss.Queue[] = [
  { name: QUEUES.webhookDead, retentionDays: 30 },
  {
    name: QUEUES.webhook,
    retryLimit: 8,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: 15,
    deadLetter: QUEUES.webhookDead,
  },
  { name: QUEUES.telegramDead, retentionDays: 30 },
  {
    name: QUEUES.telegramSend,
    retryLimit: 10,
    retryDelay: 1,
    retryBackoff: true,
    expireInSeconds: 60,
    deadLetter: QUEUES.telegramDead,
  },
];

const SCHEMA = 'pgboss';

/** pg-boss's own SQL builders: the adapter recognises the statements it must not fail. */
const plans = createRequire(import.meta.url)('pg-boss/src/plans.js') as Record<'completeJobs' | 'failJobsById', (schema: string) => string>;

/**
 * pg-boss runs on the shared pool through its `db` adapter: on the embedded database that
 * is the only way to reach the single backend, and on a real one it saves a second pool.
 * Only the worker role supervises (maintenance, expiry); a gateway only inserts jobs.
 */
export async function startQueue(options: { db: Db; logger: Logger; supervise: boolean }): Promise<PgBoss> {
  const { db, logger, supervise } = options;
  // pg-boss 10 records a job's outcome with complete() or fail() without awaiting either,
  // so a failed write would be an unhandled rejection that ends the process. The adapter
  // therefore never rejects those two statements: it logs the error and answers nothing,
  // which pg-boss reads as "no job affected". The job stays active, expires and is tried
  // again; webhook effects are idempotent, so nothing is lost or applied twice. Once pg-boss
  // has stopped (a fetch in flight can still return jobs), every statement answers nothing
  // in the same way instead of reaching a closed pool.
  const outcomeWrites = new Set([plans.completeJobs(SCHEMA), plans.failJobsById(SCHEMA)]);
  const nothing = undefined as unknown as { rows: unknown[] };
  let stopped = false;
  const executeSql = async (text: string, values: unknown[]) => {
    if (stopped) return nothing;
    if (!outcomeWrites.has(text)) return db.executeSql(text, values);
    try {
      return await db.executeSql(text, values);
    } catch (error) {
      logger.warn({ err: error }, 'could not record a job outcome; the job will expire and run again');
      return nothing;
    }
  };
  const boss = new PgBoss({
    db: { executeSql },
    schema: SCHEMA,
    supervise,
    schedule: false,
    migrate: true,
    // Completed jobs are only bookkeeping (the inbox row is the record): archive them
    // after an hour instead of 12 h so the job table stays small under webhook load.
    archiveCompletedAfterSeconds: 3600,
  });
  boss.on('error', (error) => logger.error({ err: error }, 'job queue error'));
  boss.on('stopped', () => (stopped = true));
  await boss.start();
  for (const queue of QUEUE_OPTIONS) {
    const { name, ...settings } = queue;
    const existing = await boss.getQueue(name);
    if (!existing) await boss.createQueue(name, { name, ...settings });
    // Settings are code, not data: a changed policy reaches queues created by older builds.
    else await boss.updateQueue(name, { name, ...settings });
  }
  return boss;
}
