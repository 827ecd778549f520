import { randomUUID } from 'node:crypto';
import type { Deps } from '../deps.ts';
import type { Queryable } from '../lib/db.ts';
import { QUEUES, type PgBoss, type WebhookJob } from '../lib/queue.ts';

/** Where a delivery came in; the public names of contract section 5. */
export type WebhookSource = 'billing' | 'payment' | 'operator' | 'messengerone' | 'messengertwo';

/** A verified delivery, ready to be kept. `scope` is the site key or channel id ('' if none). */
export type InboxDelivery = { source: WebhookSource; scope: string; externalId: string; payload: Buffer };

/** An inbox row as the worker reads it back. */
export type InboxEntry = { id: string; source: WebhookSource; scope: string; payload: Buffer; receivedAt: Date };

export type Outcome = { state: 'processed' } | { state: 'ignored'; reason: string };

export const PROCESSED: Outcome = { state: 'processed' };
export const ignored = (reason: string): Outcome => ({ state: 'ignored', reason });

export function webhookJobs(ids: string[]): Array<{ id: string; name: string; data: WebhookJob }> {
  return ids.map((id) => ({ id, name: QUEUES.webhook, data: { inboxId: id } }));
}

/** The pg-boss adapter bound to a transaction, so jobs commit or roll back with the rows. */
export function txDb(tx: { executeSql: PgBoss.Db['executeSql'] }): { db: PgBoss.Db } {
  return { db: { executeSql: tx.executeSql } };
}

const INSERT_INBOX = {
  name: 'webhook_inbox_insert',
  text: `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at)
         SELECT id, provider, scope, external_id, payload, $6::timestamptz
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bytea[])
           AS d(id, provider, scope, external_id, payload)
         ON CONFLICT (provider, scope, external_id) DO NOTHING
         RETURNING id`,
};

/**
 * Keeps a group of deliveries with one statement, committed on its own: one round trip for
 * the whole group, which is what lets ingest keep up with a provider's bursts. A delivery
 * already kept is skipped, which is what makes a provider's retry a no-op. The worker's
 * dispatcher turns the new rows into jobs (inbox.dispatcher.ts). Returns the new rows' ids.
 */
export async function keepDeliveries(
  deps: Pick<Deps, 'db' | 'clock'>,
  deliveries: Array<InboxDelivery & { id: string }>,
): Promise<Set<string>> {
  const rows = await deps.db.query<{ id: string }>(INSERT_INBOX, [
    deliveries.map((d) => d.id),
    deliveries.map((d) => d.source),
    deliveries.map((d) => d.scope),
    deliveries.map((d) => d.externalId),
    deliveries.map((d) => d.payload),
    deps.clock.now(),
  ]);
  return new Set(rows.map((row) => row.id));
}

export const deliveryKey = (d: InboxDelivery) => `${d.source}\u0000${d.scope}\u0000${d.externalId}`;

export function newDeliveryId(): string {
  return randomUUID();
}

/** last_error is left as it was: after a success it still tells why earlier attempts failed. */
export async function setOutcome(tx: Queryable, id: string, outcome: Outcome, now: Date): Promise<void> {
  await tx.query(
    {
      name: 'webhook_inbox_outcome',
      text: 'UPDATE webhook_inbox SET state = $2, reason = $3, attempts = attempts + 1, processed_at = $4 WHERE id = $1',
    },
    [id, outcome.state, outcome.state === 'ignored' ? outcome.reason : null, now],
  );
}
