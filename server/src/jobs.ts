import type { PgBoss } from './lib/queue.ts';
import { uuidv7 } from './lib/uuid7.ts';

/** The application's queues (lib/queue.ts makes them, idempotently, at start). */
export const QUEUES = {
  webhook: 'webhook-process',
  webhookDead: 'webhook-dead',
  telegramSend: 'telegram-send',
  telegramDead: 'telegram-dead',
  passwordReset: 'password-reset',
} as const;

/**
 * Jobs for deliveries put back by a replay. They get fresh ids: the first job of a row (id =
 * row id) may still be in pg-boss's table, failed or archived, and inserting that id again
 * would silently do nothing. Processing is idempotent, so a second job is harmless.
 */
export function webhookReplayJobs(inboxIds: string[]): Array<{ id: string; name: string; data: WebhookJob }> {
  // Time-ordered, so that pg-boss hands them out in the order given (lib/uuid7.ts).
  return inboxIds.map((inboxId) => ({ id: uuidv7(), name: QUEUES.webhook, data: { inboxId } }));
}

/** A reset link asked for: the worker finds out whether the address has an account. */
export type PasswordResetJob = { email: string };

/** The payload of a webhook-process job; the job id is the inbox row id as well. */
export type WebhookJob = { inboxId: string };

/**
 * One webhook-process job per inbox row, with the row's id as the job's: inserting one that
 * already exists (waiting for a retry, say) is a no-op.
 */
export function webhookJobs(inboxIds: string[]): Array<{ id: string; name: string; data: WebhookJob }> {
  return inboxIds.map((id) => ({ id, name: QUEUES.webhook, data: { inboxId: id } }));
}

/** The webhook queue's retry delay (QUEUE_POLICIES): a delivery's first retry waits about this long. */
export const WEBHOOK_RETRY_DELAY_SECONDS = 2;

/**
 * Jobs for deliveries whose first attempt, made straight from the inbox (webhooks/inbox/
 * dispatcher.ts), failed: due after the first retry delay, as the queue's own retry would be.
 * The job id is the row id, as in webhookJobs; no job was made for these rows before.
 */
export function webhookRetryJobs(inboxIds: string[]): Array<{ id: string; name: string; data: WebhookJob; startAfter: string }> {
  // An interval: pg-boss adds it to the database's now().
  const startAfter = `${WEBHOOK_RETRY_DELAY_SECONDS} seconds`;
  return inboxIds.map((id) => ({ id, name: QUEUES.webhook, data: { inboxId: id }, startAfter }));
}

/**
 * Webhook effects are idempotent (row lock + state check), so a short expiry is safe: a job
 * whose worker died is handed out again after 15 s instead of pg-boss's default 15 minutes.
 * A Bot API call is not idempotent, so its expiry is well above the 10 s request timeout.
 * Backoff: pg-boss waits retryDelay * 2^n (randomised up to twice that) before try n+1,
 * so 8 webhook retries span roughly 8 to 17 minutes before the row is marked dead.
 */
export const QUEUE_POLICIES: PgBoss.Queue[] = [
  { name: QUEUES.webhookDead, retentionDays: 30 },
  {
    name: QUEUES.webhook,
    retryLimit: 8,
    retryDelay: WEBHOOK_RETRY_DELAY_SECONDS,
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
  // A retry issues a new link, which voids the one a failed try may have mailed.
  { name: QUEUES.passwordReset, retryLimit: 5, retryDelay: 2, retryBackoff: true, expireInSeconds: 60 },
];
