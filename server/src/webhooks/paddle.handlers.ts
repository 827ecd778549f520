import type { Deps } from '../deps.ts';
import type { Tx } from '../lib/db.ts';
import { PROCESSED, ignored, type Outcome } from './inbox.ts';
import { lockNames } from './locks.ts';
import type { PaddleEvent } from './paddle.ts';
import { isRecord } from './signature.ts';

const PAID_STATUSES = new Set(['active', 'trialing', 'past_due']);
const ENDED_STATUSES = new Set(['canceled', 'paused']);
export const FREE_PLAN = 'free';

type Subscription = { id: string; status: string; accountId: number | undefined; priceId: string | undefined };

/**
 * `subscription.*` sets the account's plan from BILLING_PLANS while the subscription is
 * paid for, and back to free when it ends. Per subscription, only an event at least as
 * recent as the last one applied changes anything: Paddle does not deliver in order.
 */
export async function handleBillingEvent(deps: Deps, tx: Tx, event: PaddleEvent): Promise<Outcome> {
  if (!event.eventType.startsWith('subscription.')) return ignored(`event type ${event.eventType} is not handled`);
  const subscription = readSubscription(event.data);
  if (!subscription) return ignored('subscription id or status missing');
  if (subscription.accountId === undefined) return ignored('no custom_data.account_id');
  const [account] = await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [subscription.accountId]);
  if (!account) return ignored(`unknown account ${subscription.accountId}`);

  await lockNames(tx, [`billing:${subscription.id}`]);
  const [last] = await tx.query<{ last_occurred_at: Date }>(
    'SELECT last_occurred_at FROM billing_subscriptions WHERE subscription_id = $1',
    [subscription.id],
  );
  if (last && event.occurredAt < last.last_occurred_at) return ignored('older than the last applied event of this subscription');
  await recordSubscription(tx, subscription, event.occurredAt);

  const plan = planFor(deps, subscription);
  if (plan === undefined) {
    return ignored(PAID_STATUSES.has(subscription.status) ? `unknown price ${subscription.priceId}` : `status ${subscription.status} is not handled`);
  }
  await tx.query('UPDATE accounts SET plan = $2, updated_at = $3 WHERE id = $1', [subscription.accountId, plan, deps.clock.now()]);
  return PROCESSED;
}

function planFor(deps: Deps, subscription: Subscription): string | undefined {
  if (ENDED_STATUSES.has(subscription.status)) return FREE_PLAN;
  if (!PAID_STATUSES.has(subscription.status) || !subscription.priceId) return undefined;
  return deps.config.billingPlans.get(subscription.priceId);
}

/** Even an event that cannot set a plan (unknown price) advances the order, so an older one cannot win later. */
async function recordSubscription(tx: Tx, subscription: Subscription, occurredAt: Date): Promise<void> {
  await tx.query(
    `INSERT INTO billing_subscriptions (subscription_id, account_id, status, price_id, last_occurred_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (subscription_id) DO UPDATE SET
       account_id = EXCLUDED.account_id, status = EXCLUDED.status,
       price_id = EXCLUDED.price_id, last_occurred_at = EXCLUDED.last_occurred_at`,
    [subscription.id, subscription.accountId, subscription.status, subscription.priceId ?? null, occurredAt],
  );
}

function readSubscription(data: Record<string, unknown>): Subscription | undefined {
  if (typeof data.id !== 'string' || typeof data.status !== 'string') return undefined;
  const customData = isRecord(data.custom_data) ? data.custom_data : {};
  const firstItem = Array.isArray(data.items) && isRecord(data.items[0]) ? data.items[0] : {};
  const price = isRecord(firstItem.price) ? firstItem.price : {};
  return {
    id: data.id,
    status: data.status,
    accountId: accountIdFrom(customData.account_id),
    priceId: typeof price.id === 'string' ? price.id : undefined,
  };
}

/** custom_data is whatever the checkout put there: accept 42 and "42", nothing else. */
function accountIdFrom(value: unknown): number | undefined {
  const id = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;
  return Number.isSafeInteger(id) && (id as number) > 0 && (id as number) <= 2_147_483_647 ? (id as number) : undefined;
}
