import type { Deps } from '../deps.ts';
import type { Tx } from '../lib/db.ts';
import { PROCESSED, ignored, type Outcome } from './inbox.ts';
import { lockNames } from './locks.ts';
import { isRecord } from './signature.ts';
import type { StripeEvent } from './stripe.ts';

export type PaymentStatus = 'pending' | 'paid' | 'failed' | 'expired' | 'refunded';

const STATUS_BY_EVENT: Record<string, PaymentStatus> = {
  'checkout.session.completed': 'paid',
  'checkout.session.async_payment_succeeded': 'paid',
  'checkout.session.async_payment_failed': 'failed',
  'checkout.session.expired': 'expired',
  'payment_intent.succeeded': 'paid',
  'payment_intent.payment_failed': 'failed',
  'charge.refunded': 'refunded',
};

/** What one event says about one payment. */
type PaymentChange = {
  reference: string;
  checkoutSession: string | undefined;
  status: PaymentStatus;
  at: Date;
  amount: number | undefined;
  currency: string | undefined;
};

type PaymentState = { status: PaymentStatus; at: Date; amount: number | undefined; currency: string | undefined; checkoutSession: string | undefined };

type PaymentRow = { reference: string; checkout_session: string | null; status: PaymentStatus; amount: string | null; currency: string | null; last_event_at: Date };

/** Applies a Stripe event to the payment of the site it was delivered for. */
export async function handlePaymentEvent(deps: Deps, tx: Tx, event: StripeEvent, siteKey: string): Promise<Outcome> {
  const change = readChange(event);
  if (typeof change === 'string') return ignored(change);
  const [site] = await tx.query<{ id: number }>({ name: 'payment_site_id', text: 'SELECT id FROM sites WHERE site_key = $1' }, [siteKey]);
  if (!site) return ignored('the site no longer exists');
  await applyChange(deps, tx, site.id, change);
  return PROCESSED;
}

/** A change, or the reason the event changes nothing. */
function readChange(event: StripeEvent): PaymentChange | string {
  const status = STATUS_BY_EVENT[event.type];
  if (!status) return `event type ${event.type} is not handled`;
  const object = event.object;
  const id = typeof object.id === 'string' ? object.id : undefined;
  const isSession = event.type.startsWith('checkout.session.');
  const paymentIntent = event.type.startsWith('payment_intent.') ? id : idOf(object.payment_intent);
  const checkoutSession = isSession ? id : undefined;
  // A charge without a payment intent predates them: the charge itself is the payment.
  const reference = paymentIntent ?? checkoutSession ?? id;
  if (!reference) return 'the event names no payment';
  // charge.refunded also fires for a partial refund; only a full one makes the payment refunded.
  if (event.type === 'charge.refunded' && object.refunded === false) return 'partial refund';
  const amount = isSession ? object.amount_total : object.amount;
  return {
    reference,
    checkoutSession,
    // An async payment method completes the session before the money arrives.
    status: event.type === 'checkout.session.completed' && object.payment_status === 'unpaid' ? 'pending' : status,
    at: new Date(event.created * 1000),
    amount: Number.isSafeInteger(amount) ? (amount as number) : undefined,
    currency: typeof object.currency === 'string' ? object.currency : undefined,
  };
}

function idOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value) return value;
  return isRecord(value) && typeof value.id === 'string' ? value.id : undefined;
}

const SELECT_PAYMENTS = {
  name: 'payment_rows',
  text: `SELECT reference, checkout_session, status, amount, currency, last_event_at FROM payments
         WHERE site_id = $1 AND (reference = ANY($2) OR checkout_session = ANY($2)) FOR UPDATE`,
};

const UPSERT_PAYMENT = {
  name: 'payment_upsert',
  text: `INSERT INTO payments (site_id, reference, checkout_session, status, amount, currency, last_event_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (site_id, reference) DO UPDATE SET checkout_session = EXCLUDED.checkout_session,
           status = EXCLUDED.status, amount = EXCLUDED.amount, currency = EXCLUDED.currency,
           last_event_at = EXCLUDED.last_event_at, updated_at = EXCLUDED.updated_at`,
};

/**
 * A payment is keyed by its payment intent, else by its checkout session. A session seen
 * before its payment intent was known is re-keyed (merged) once an event links the two.
 */
async function applyChange(deps: Deps, tx: Tx, siteId: number, change: PaymentChange): Promise<void> {
  const keys = [change.reference, change.checkoutSession].filter((key): key is string => Boolean(key));
  await lockNames(tx, keys.map((key) => `payment:${siteId}:${key}`));
  const rows = await tx.query<PaymentRow>(SELECT_PAYMENTS, [siteId, keys]);
  const reference = targetReference(change, rows);
  let state: PaymentState | undefined;
  for (const row of rows) state = merge(state, fromRow(row));
  state = merge(state, change);
  const stale = rows.filter((row) => row.reference !== reference).map((row) => row.reference);
  if (stale.length) await tx.query('DELETE FROM payments WHERE site_id = $1 AND reference = ANY($2)', [siteId, stale]);
  await tx.query(
    UPSERT_PAYMENT,
    [siteId, reference, state.checkoutSession ?? null, state.status, state.amount ?? null, state.currency ?? null, state.at, deps.clock.now()],
  );
}

/** An event that knows only the session keeps the payment-intent key a linked row already has. */
function targetReference(change: PaymentChange, rows: PaymentRow[]): string {
  if (change.reference !== change.checkoutSession) return change.reference;
  const linked = rows.find((row) => row.checkout_session === change.checkoutSession && row.reference !== change.checkoutSession);
  return linked?.reference ?? change.reference;
}

function fromRow(row: PaymentRow): PaymentState {
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
export function supersedes(current: { status: PaymentStatus; at: Date }, incoming: { status: PaymentStatus; at: Date }): boolean {
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
