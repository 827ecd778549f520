import type { Deps } from '../../deps.ts';
import { lockNames } from '../../lib/advisory-locks.ts';
import type { Tx } from '../../lib/db.ts';
import { emitAccountEvent, lockAccount, setPlan } from '../accounts/index.ts';
import { eventOrderingLocks } from '../events/index.ts';
import * as repo from './billing.repo.ts';

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
  const account = await lockAccount(tx, { id: change.accountId });
  if (!account) return `unknown account ${change.accountId}`;

  await lockNames(tx, [billingLockName(change.id)]);
  const last = await repo.lastApplied(tx, change.id);
  if (last && change.occurredAt < last.last_occurred_at) return 'older than the last applied event of this subscription';
  await recordSubscription(tx, change);
  // A subscription that moved to another account leaves the one it came from: both are redone.
  const accounts = new Set([change.accountId, last?.account_id ?? change.accountId]);
  for (const accountId of accounts) await applyBestPlan(deps, tx, accountId);

  const live = LIVE_STATUSES.includes(change.status);
  if (live && !deps.config.billingPlans.has(change.priceId ?? '')) return `unknown price ${change.priceId}`;
  return undefined;
}

/**
 * The locks that applying these changes takes (applySubscriptionChange), for a chunk of
 * deliveries that takes all its locks before applying any: the rows of the accounts named
 * and of those the subscriptions were on before, the subscriptions', and the accounts'
 * ordering locks while `account.updated` is wanted.
 */
export async function subscriptionChangeLocks(tx: Tx, changes: SubscriptionChange[]): Promise<{ accounts: number[]; names: string[]; orderings: string[] }> {
  if (!changes.length) return { accounts: [], names: [], orderings: [] };
  const ids = changes.map((change) => change.id);
  const accounts = [...new Set([...changes.map((change) => change.accountId), ...(await repo.accountsOfSubscriptions(tx, ids))])];
  return { accounts, names: ids.map(billingLockName), orderings: await eventOrderingLocks(tx, 'account.updated', accounts) };
}

const billingLockName = (subscriptionId: string) => `billing:${subscriptionId}`;

/** The plan of the account's best live subscription; rank is the order of BILLING_PLANS, last highest. */
async function applyBestPlan(deps: Deps, tx: Tx, accountId: number): Promise<void> {
  // Locked before its subscriptions are read, so two events of one account cannot interleave.
  await lockAccount(tx, { id: accountId });
  const prices = [...deps.config.billingPlans.keys()];
  const live = await repo.pricesOf(tx, accountId, LIVE_STATUSES);
  const best = Math.max(-1, ...live.map((priceId) => prices.indexOf(priceId ?? '')));
  const plan = best < 0 ? FREE_PLAN : deps.config.billingPlans.get(prices[best])!;
  if (await setPlan(tx, accountId, plan, deps.clock.now())) await emitAccountEvent(tx, deps.clock, accountId, ['plan']);
}

/** Even a change that cannot set a plan (unknown price) advances the order, so an older one cannot win later. */
async function recordSubscription(tx: Tx, change: SubscriptionChange): Promise<void> {
  await repo.upsertSubscription(tx, {
    subscription_id: change.id,
    account_id: change.accountId,
    status: change.status,
    price_id: change.priceId ?? null,
    last_occurred_at: change.occurredAt,
  });
}
