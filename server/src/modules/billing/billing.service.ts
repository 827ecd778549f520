import type { Deps } from '../../deps.ts';
import { lockNames } from '../../lib/advisory-locks.ts';
import type { Tx } from '../../lib/db.ts';

const LIVE_STATUSES = ['active', 'trialing', 'past_due'];
const FREE_PLAN = 'free';

/** What one billing event says about one subscription. */
export type SubscriptionChange = { id: string; status: string; accountId: number; priceId: string | undefined; occurredAt: Date };

/**
 * Records, per subscription, its status and price; the account then gets the highest-ranked
 * plan among all its live subscriptions, or free. A checkout can name any account, so one
 * subscription ending must not undo another that is live. Per subscription, only a change at
 * least as recent as the last applied one counts: providers do not deliver in order.
 * Returns why the change was not (wholly) applied, if it was not.
 */
export async function applySubscriptionChange(deps: Deps, tx: Tx, change: SubscriptionChange): Promise<string | undefined> {
  const [account] = await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [change.accountId]);
  if (!account) return `unknown account ${change.accountId}`;

  await lockNames(tx, [`billing:${change.id}`]);
  const [last] = await tx.query<{ account_id: number | null; last_occurred_at: Date }>(
    'SELECT account_id, last_occurred_at FROM billing_subscriptions WHERE subscription_id = $1',
    [change.id],
  );
  if (last && change.occurredAt < last.last_occurred_at) return 'older than the last applied event of this subscription';
  await recordSubscription(tx, change);
  // A subscription that moved to another account leaves the one it came from: both are redone.
  const accounts = new Set([change.accountId, last?.account_id ?? change.accountId]);
  for (const accountId of accounts) await applyBestPlan(deps, tx, accountId);

  const live = LIVE_STATUSES.includes(change.status);
  if (live && !deps.config.billingPlans.has(change.priceId ?? '')) return `unknown price ${change.priceId}`;
  return undefined;
}

/** The plan of the account's best live subscription; rank is the order of BILLING_PLANS, last highest. */
async function applyBestPlan(deps: Deps, tx: Tx, accountId: number): Promise<void> {
  // Locked before its subscriptions are read, so two events of one account cannot interleave.
  await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  const prices = [...deps.config.billingPlans.keys()];
  const rows = await tx.query<{ price_id: string | null }>(
    'SELECT price_id FROM billing_subscriptions WHERE account_id = $1 AND status = ANY($2)',
    [accountId, LIVE_STATUSES],
  );
  const best = Math.max(-1, ...rows.map((row) => prices.indexOf(row.price_id ?? '')));
  const plan = best < 0 ? FREE_PLAN : deps.config.billingPlans.get(prices[best])!;
  await tx.query('UPDATE accounts SET plan = $2, updated_at = $3 WHERE id = $1 AND plan IS DISTINCT FROM $2', [accountId, plan, deps.clock.now()]);
}

/** Even a change that cannot set a plan (unknown price) advances the order, so an older one cannot win later. */
async function recordSubscription(tx: Tx, change: SubscriptionChange): Promise<void> {
  await tx.query(
    `INSERT INTO billing_subscriptions (subscription_id, account_id, status, price_id, last_occurred_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (subscription_id) DO UPDATE SET
       account_id = EXCLUDED.account_id, status = EXCLUDED.status,
       price_id = EXCLUDED.price_id, last_occurred_at = EXCLUDED.last_occurred_at`,
    [change.id, change.accountId, change.status, change.priceId ?? null, change.occurredAt],
  );
}
