import type { Deps } from '../../deps.ts';
import { lockNames } from '../../lib/advisory-locks.ts';
import type { Tx } from '../../lib/db.ts';
import { emitEvent, eventOrderingLocks } from '../events/index.ts';
import * as repo from './sites.repo.ts';
import type { PaymentStatus } from './sites.schemas.ts';

/** What one provider event says about one payment of a site. */
export type PaymentChange = {
  reference: string;
  checkoutSession: string | undefined;
  status: PaymentStatus;
  at: Date;
  amount: number | undefined;
  currency: string | undefined;
};

type PaymentState = { status: PaymentStatus; at: Date; amount: number | undefined; currency: string | undefined; checkoutSession: string | undefined };

/**
 * Applies a change to the payment of the site with `siteKey`, in the caller's transaction.
 * Returns why nothing changed when the site is gone.
 */
export async function applyPaymentChange(deps: Deps, tx: Tx, siteKey: string, change: PaymentChange): Promise<string | undefined> {
  const site = await repo.siteOfDelivery(tx, siteKey);
  if (!site) return 'the site no longer exists';
  const { before, after } = await applyChange(deps, tx, site.id, change);
  // The platform hears of a payment when its status moves, not of every event that restates it.
  if (before !== after.status) {
    await emitEvent(tx, deps.clock, {
      type: 'payment.updated',
      data: { site_key: siteKey, account_id: site.account_id, reference: after.reference, status: after.status, amount: after.amount ?? null, currency: after.currency ?? null },
    });
  }
  return undefined;
}

/**
 * The locks that applying these changes takes (applyPaymentChange), for a chunk of deliveries
 * that takes all its locks before applying any: the payments', and the ordering lock of each
 * site's account while `payment.updated` is wanted.
 */
export async function paymentChangeLocks(tx: Tx, changes: Array<{ siteKey: string; change: PaymentChange }>): Promise<{ names: string[]; orderings: string[] }> {
  if (!changes.length) return { names: [], orderings: [] };
  const sites = new Map((await repo.sitesOfDeliveries(tx, [...new Set(changes.map(({ siteKey }) => siteKey))])).map((site) => [site.site_key, site]));
  const names = changes.flatMap(({ siteKey, change }) => {
    const site = sites.get(siteKey);
    return site ? paymentKeys(change).map((key) => paymentLockName(site.id, key)) : [];
  });
  const accounts = [...new Set([...sites.values()].map((site) => site.account_id))];
  return { names, orderings: await eventOrderingLocks(tx, 'payment.updated', accounts) };
}

const paymentKeys = (change: PaymentChange) => [change.reference, change.checkoutSession].filter((key): key is string => Boolean(key));
const paymentLockName = (siteId: number, key: string) => `payment:${siteId}:${key}`;

/**
 * A payment is keyed by its payment intent, else by its checkout session. A session seen
 * before its payment intent was known is re-keyed (merged) once an event links the two.
 */
async function applyChange(deps: Deps, tx: Tx, siteId: number, change: PaymentChange): Promise<{ before: PaymentStatus | undefined; after: PaymentState & { reference: string } }> {
  const keys = paymentKeys(change);
  await lockNames(tx, keys.map((key) => paymentLockName(siteId, key)));
  const rows = await repo.lockPayments(tx, siteId, keys);
  const reference = targetReference(change, rows);
  let state: PaymentState | undefined;
  for (const row of rows) state = merge(state, fromRow(row));
  const before = state?.status;
  state = merge(state, change);
  const stale = rows.filter((row) => row.reference !== reference).map((row) => row.reference);
  if (stale.length) await repo.deletePayments(tx, siteId, stale);
  await repo.upsertPayment(tx, {
    site_id: siteId,
    reference,
    checkout_session: state.checkoutSession ?? null,
    status: state.status,
    amount: state.amount ?? null,
    currency: state.currency ?? null,
    last_event_at: state.at,
    updated_at: deps.clock.now(),
  });
  return { before, after: { ...state, reference } };
}

/** An event that knows only the session keeps the payment-intent key a linked row already has. */
function targetReference(change: PaymentChange, rows: repo.PaymentRow[]): string {
  if (change.reference !== change.checkoutSession) return change.reference;
  const linked = rows.find((row) => row.checkout_session === change.checkoutSession && row.reference !== change.checkoutSession);
  return linked?.reference ?? change.reference;
}

function fromRow(row: repo.PaymentRow): PaymentState {
  return {
    status: row.status,
    at: row.last_event_at,
    amount: row.amount === null ? undefined : Number(row.amount),
    currency: row.currency ?? undefined,
    checkoutSession: row.checkout_session ?? undefined,
  };
}

// Within one second (Stripe's resolution) a payment only moves forward.
const PROGRESS: Record<PaymentStatus, number> = { pending: 0, failed: 1, expired: 1, paid: 2, refunded: 3 };

/** Whether `incoming` may replace `current`: refunded is final, and an older event never undoes a newer one. */
function supersedes(current: { status: PaymentStatus; at: Date }, incoming: { status: PaymentStatus; at: Date }): boolean {
  if (current.status === 'refunded') return false;
  if (incoming.status === 'refunded') return true;
  const diff = incoming.at.getTime() - current.at.getTime();
  return diff > 0 || (diff === 0 && PROGRESS[incoming.status] >= PROGRESS[current.status]);
}

/** The winner's status and time; amount, currency and session fill in from either side. */
function merge(current: PaymentState | undefined, incoming: PaymentState): PaymentState {
  if (!current) return incoming;
  const [winner, other] = supersedes(current, incoming) ? [incoming, current] : [current, incoming];
  return {
    status: winner.status,
    at: winner.at > other.at ? winner.at : other.at,
    amount: winner.amount ?? other.amount,
    currency: winner.currency ?? other.currency,
    checkoutSession: winner.checkoutSession ?? other.checkoutSession,
  };
}
