import type { Deps } from '../../deps.ts';
import type { Tx } from '../../lib/db.ts';
import { emitEvents, eventOrderingLocks, type OutboundEvent } from '../events/index.ts';
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
type Payment = PaymentState & { reference: string };

/**
 * Applies each change to the payment of its site, in the caller's transaction and in the
 * order given, as that many calls one after the other would, with four statements for all
 * of them: the sites, their payments that the changes name (locked), the payments as the
 * changes leave them, and the events (and a fifth, a delete, when a change merges two).
 * Returns, for each change, why it changed nothing (the site is gone), or undefined. The
 * caller holds the locks that paymentChangeLocks names for these changes: the worker's
 * chunk takes them before it applies any entry (webhooks/inbox/processor.ts).
 */
export async function applyPaymentChanges(deps: Deps, tx: Tx, changes: Array<{ siteKey: string; change: PaymentChange }>): Promise<Array<string | undefined>> {
  if (!changes.length) return [];
  const sites = await sitesByKey(tx, changes);
  const known = changes.filter(({ siteKey }) => sites.has(siteKey));
  // Each site's payments by reference, as the changes so far leave them.
  const paymentsOf = new Map<number, Map<string, Payment>>([...sites.values()].map((site) => [site.id, new Map()]));
  const stored: Array<{ site_id: number; reference: string }> = [];
  if (known.length) {
    // A payment named by several changes is probed once per key; lockPayments returns it once.
    const keys = known.flatMap(({ siteKey, change }) => paymentKeys(change).map((key) => ({ siteId: sites.get(siteKey)!.id, key })));
    for (const row of await repo.lockPayments(tx, keys)) {
      paymentsOf.get(row.site_id)!.set(row.reference, fromRow(row));
      stored.push(row);
    }
  }
  const changed = new Map<Payment, number>();
  const events: OutboundEvent[] = [];
  const reasons = changes.map(({ siteKey, change }) => {
    const site = sites.get(siteKey);
    if (!site) return 'the site no longer exists';
    const { before, after } = applyChange(paymentsOf.get(site.id)!, change);
    if (after === undefined) return undefined;
    changed.set(after, site.id);
    // The platform hears of a payment when its status moves, not of every event that restates it.
    if (before !== after.status) {
      events.push({
        type: 'payment.updated',
        data: { site_key: siteKey, account_id: site.account_id, reference: after.reference, status: after.status, amount: after.amount ?? null, currency: after.currency ?? null },
      });
    }
    return undefined;
  });
  // A row merged into another is deleted before the other takes over its checkout session.
  await repo.deletePayments(tx, stored.filter((row) => !paymentsOf.get(row.site_id)!.has(row.reference)));
  const final = [...changed].filter(([payment, siteId]) => paymentsOf.get(siteId)!.get(payment.reference) === payment);
  await repo.upsertPayments(
    tx,
    final.map(([payment, siteId]) => ({
      site_id: siteId,
      reference: payment.reference,
      checkout_session: payment.checkoutSession ?? null,
      status: payment.status,
      amount: payment.amount ?? null,
      currency: payment.currency ?? null,
      last_event_at: payment.at,
    })),
    deps.clock.now(),
  );
  await emitEvents(tx, deps.clock, events);
  return reasons;
}

/**
 * The locks that applying these changes takes (applyPaymentChanges), for a chunk of deliveries
 * that takes all its locks before applying any: the payments', and the ordering lock of each
 * site's account while `payment.updated` is wanted.
 */
export async function paymentChangeLocks(tx: Tx, changes: Array<{ siteKey: string; change: PaymentChange }>): Promise<{ names: string[]; orderings: string[] }> {
  if (!changes.length) return { names: [], orderings: [] };
  const sites = await sitesByKey(tx, changes);
  const names = changes.flatMap(({ siteKey, change }) => {
    const site = sites.get(siteKey);
    return site ? paymentKeys(change).map((key) => paymentLockName(site.id, key)) : [];
  });
  const accounts = [...new Set([...sites.values()].map((site) => site.account_id))];
  return { names, orderings: await eventOrderingLocks(tx, 'payment.updated', accounts) };
}

/** The sites the changes are for, by key; a site that is gone is not among them. */
async function sitesByKey(tx: Tx, changes: Array<{ siteKey: string }>) {
  return new Map((await repo.sitesOfDeliveries(tx, [...new Set(changes.map(({ siteKey }) => siteKey))])).map((site) => [site.site_key, site]));
}

const paymentKeys = (change: PaymentChange) => [change.reference, change.checkoutSession].filter((key): key is string => Boolean(key));
const paymentLockName = (siteId: number, key: string) => `payment:${siteId}:${key}`;

/**
 * A payment is keyed by its payment intent, else by its checkout session. A session seen
 * before its payment intent was known is re-keyed (merged) once an event links the two.
 * On the site's payments in memory: the ones the change's keys find are merged into one,
 * under the reference it keeps. Returns the status before and the payment after, or no
 * payment when the change leaves the one it names exactly as it was.
 */
function applyChange(payments: Map<string, Payment>, change: PaymentChange): { before: PaymentStatus | undefined; after: Payment | undefined } {
  const keys = paymentKeys(change);
  const rows = [...payments.values()].filter((row) => keys.includes(row.reference) || (row.checkoutSession !== undefined && keys.includes(row.checkoutSession)));
  const reference = targetReference(change, rows);
  let state: PaymentState | undefined;
  for (const row of rows) state = merge(state, row);
  const before = state?.status;
  state = merge(state, change);
  // An event that tells nothing new (an older one, a replay) leaves the payment, and its
  // updated_at, as they are: undefined, nothing to write.
  if (rows.length === 1 && rows[0].reference === reference && samePayment(rows[0], state)) return { before, after: undefined };
  for (const row of rows) payments.delete(row.reference);
  const after = { ...state, reference };
  payments.set(reference, after);
  return { before, after };
}

const samePayment = (a: PaymentState, b: PaymentState) =>
  a.status === b.status && a.at.getTime() === b.at.getTime() && a.amount === b.amount && a.currency === b.currency && a.checkoutSession === b.checkoutSession;

/** An event that knows only the session keeps the payment-intent key a linked row already has. */
function targetReference(change: PaymentChange, rows: Payment[]): string {
  if (change.reference !== change.checkoutSession) return change.reference;
  const linked = rows.find((row) => row.checkoutSession === change.checkoutSession && row.reference !== change.checkoutSession);
  return linked?.reference ?? change.reference;
}

function fromRow(row: repo.PaymentRow): Payment {
  return {
    reference: row.reference,
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
