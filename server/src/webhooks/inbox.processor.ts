import type { Deps } from '../deps.ts';
import type { Tx } from '../lib/db.ts';
import { setOutcome, type InboxEntry, type Outcome, type WebhookSource } from './inbox.ts';
import { parsePaddleEvent } from './paddle.ts';
import { handleBillingEvent } from './paddle.handlers.ts';
import { parseStripeEvent } from './stripe.ts';
import { handlePaymentEvent } from './stripe.handlers.ts';
import { parseTelegramUpdate } from './telegram.ts';
import { handleOperatorUpdate, handleVisitorUpdate } from './telegram.handlers.ts';
import { parseViberEvent } from './viber.ts';
import { handleViberEvent } from './viber.handlers.ts';

type Handler = (deps: Deps, tx: Tx, entry: InboxEntry) => Promise<Outcome>;

/** The stored bytes were verified on the way in, so they are only parsed here. */
const HANDLERS: Record<WebhookSource, Handler> = {
  billing: (deps, tx, entry) => handleBillingEvent(deps, tx, parsePaddleEvent(entry.payload)),
  payment: (deps, tx, entry) => handlePaymentEvent(deps, tx, parseStripeEvent(entry.payload), entry.scope),
  operator: (deps, tx, entry) => handleOperatorUpdate(deps, tx, parseTelegramUpdate(entry.payload), entry),
  messengerone: (deps, tx, entry) => handleVisitorUpdate(deps, tx, parseTelegramUpdate(entry.payload), entry),
  messengertwo: (deps, tx, entry) => handleViberEvent(deps, tx, parseViberEvent(entry.payload), entry),
};

type InboxRow = { id: string; provider: WebhookSource; scope: string; payload: Buffer; received_at: Date; state: string };

/**
 * Applies one inbox entry exactly once: the row lock and the state check make a second
 * job for the same entry (a retry, a sweep, a job that outlived its worker) a no-op, and
 * the effect commits together with the new state or not at all.
 */
export async function processInboxEntry(deps: Deps, inboxId: string): Promise<Outcome | undefined> {
  const outcome = await deps.db.transaction((tx) => applyEntry(deps, tx, inboxId));
  if (outcome?.state === 'ignored') logIgnored(deps, inboxId, outcome);
  return outcome;
}

/**
 * Several entries in one transaction: one commit instead of one per entry, which is most
 * of a small effect's cost. All or nothing: if one entry fails, none is applied and the
 * caller falls back to one transaction per entry to find it.
 */
export async function processInboxEntries(deps: Deps, inboxIds: string[]): Promise<void> {
  const outcomes = await deps.db.transaction(async (tx) => {
    const results: Array<Outcome | undefined> = [];
    for (const id of inboxIds) results.push(await applyEntry(deps, tx, id));
    return results;
  });
  outcomes.forEach((outcome, index) => {
    if (outcome?.state === 'ignored') logIgnored(deps, inboxIds[index], outcome);
  });
}

async function applyEntry(deps: Deps, tx: Tx, inboxId: string): Promise<Outcome | undefined> {
  const [row] = await tx.query<InboxRow>(
    {
      name: 'webhook_inbox_lock',
      text: 'SELECT id, provider, scope, payload, received_at, state FROM webhook_inbox WHERE id = $1 FOR UPDATE',
    },
    [inboxId],
  );
  if (!row || row.state !== 'received') return undefined;
  const entry: InboxEntry = { id: row.id, source: row.provider, scope: row.scope, payload: row.payload, receivedAt: row.received_at };
  const handler = HANDLERS[entry.source];
  const result = handler ? await handler(deps, tx, entry) : { state: 'ignored' as const, reason: `unknown source ${row.provider}` };
  await setOutcome(tx, row.id, result, deps.clock.now());
  return result;
}

function logIgnored(deps: Deps, inboxId: string, outcome: { reason: string }): void {
  deps.logger.info({ inboxId, reason: outcome.reason }, 'webhook ignored');
}

/** Outside the failed transaction, so the count and the error survive its rollback. */
export async function recordFailure(deps: Deps, inboxId: string, error: unknown): Promise<void> {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  await deps.db.query(
    `UPDATE webhook_inbox SET attempts = attempts + 1, last_error = $2 WHERE id = $1 AND state = 'received'`,
    [inboxId, message.slice(0, 1000)],
  );
}

/** Retries are used up: the entry is kept, visibly dead, for a person to look at. */
export async function markDead(deps: Deps, inboxId: string): Promise<void> {
  const rows = await deps.db.query<{ provider: string; attempts: number }>(
    `UPDATE webhook_inbox SET state = 'dead', processed_at = $2 WHERE id = $1 AND state = 'received' RETURNING provider, attempts`,
    [inboxId, deps.clock.now()],
  );
  if (rows[0]) deps.logger.error({ inboxId, source: rows[0].provider, attempts: rows[0].attempts }, 'webhook dead after retries');
}
