import type { Queryable } from '../../lib/db.ts';
import type { SubscriptionRecord } from './billing.model.ts';

// Every statement on billing_subscriptions (billing.model.ts).

export async function lastApplied(tx: Queryable, subscriptionId: string): Promise<Pick<SubscriptionRecord, 'account_id' | 'last_occurred_at'> | undefined> {
  const [last] = await tx.query<Pick<SubscriptionRecord, 'account_id' | 'last_occurred_at'>>(
    'SELECT account_id, last_occurred_at FROM billing_subscriptions WHERE subscription_id = $1',
    [subscriptionId],
  );
  return last;
}

/** The accounts these subscriptions were last applied to. */
export async function accountsOfSubscriptions(tx: Queryable, subscriptionIds: string[]): Promise<number[]> {
  const rows = await tx.query<Pick<SubscriptionRecord, 'account_id'>>('SELECT account_id FROM billing_subscriptions WHERE subscription_id = ANY($1::text[])', [subscriptionIds]);
  return rows.flatMap((row) => (row.account_id === null ? [] : [row.account_id]));
}

/** The prices of the account's subscriptions in one of these statuses. */
export async function pricesOf(tx: Queryable, accountId: number, statuses: string[]): Promise<Array<string | null>> {
  const rows = await tx.query<Pick<SubscriptionRecord, 'price_id'>>('SELECT price_id FROM billing_subscriptions WHERE account_id = $1 AND status = ANY($2)', [accountId, statuses]);
  return rows.map((row) => row.price_id);
}

export async function upsertSubscription(tx: Queryable, row: SubscriptionRecord): Promise<void> {
  await tx.query(
    `INSERT INTO billing_subscriptions (subscription_id, account_id, status, price_id, last_occurred_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (subscription_id) DO UPDATE SET
       account_id = EXCLUDED.account_id, status = EXCLUDED.status,
       price_id = EXCLUDED.price_id, last_occurred_at = EXCLUDED.last_occurred_at`,
    [row.subscription_id, row.account_id, row.status, row.price_id, row.last_occurred_at],
  );
}
