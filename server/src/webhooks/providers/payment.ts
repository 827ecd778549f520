import type { Deps } from '../../deps.ts';
import type { Tx } from '../../lib/db.ts';
import { applyPaymentChanges, paymentChangeLocks, siteWebhookSecret, type PaymentChange, type PaymentStatus } from '../../modules/sites/index.ts';
import { defineProvider, ignored, outcomeOf, type InboxEntry, type Outcome } from '../provider.ts';
import { parseStripeEvent, stripePayload, verifyStripe, type StripeEvent } from '../schemes/stripe.ts';
import { isRecord } from '../shared/payload.ts';

const STATUS_BY_EVENT: Record<string, PaymentStatus> = {
  'checkout.session.completed': 'paid',
  'checkout.session.async_payment_succeeded': 'paid',
  'checkout.session.async_payment_failed': 'failed',
  'checkout.session.expired': 'expired',
  'payment_intent.succeeded': 'paid',
  'payment_intent.payment_failed': 'failed',
  'charge.refunded': 'refunded',
};

/** Each client site's payment provider (Stripe) at POST /webhook/payment/{siteKey}. */
export const payment = defineProvider({
  name: 'payment',
  route: '/webhook/payment/:scope',
  scope: (siteKey) => siteKey,
  notFound: 'No such site.',
  secret: siteWebhookSecret,
  verify: verifyStripe,
  externalId: (event) => event.id,
  parse: parseStripeEvent,
  payload: stripePayload,
  async handle(deps, tx, event, entry) {
    const [outcome] = await applyEvents(deps, tx, [{ event, entry }]);
    return outcome;
  },
  handleAll: applyEvents,
  locks(deps, tx, items) {
    return paymentChangeLocks(
      tx,
      items.flatMap(({ event, entry }) => {
        const change = readChange(event);
        return typeof change === 'string' ? [] : [{ siteKey: entry.scope, change }];
      }),
    );
  },
});

/** The events' changes applied together (applyPaymentChanges); an event that names no change is ignored with its reason. */
async function applyEvents(deps: Deps, tx: Tx, items: Array<{ event: StripeEvent; entry: InboxEntry }>): Promise<Outcome[]> {
  const changes = items.map(({ event, entry }) => ({ siteKey: entry.scope, change: readChange(event) }));
  const applicable = changes.flatMap(({ siteKey, change }) => (typeof change === 'string' ? [] : [{ siteKey, change }]));
  const reasons = (await applyPaymentChanges(deps, tx, applicable)).values();
  return changes.map(({ change }) => (typeof change === 'string' ? ignored(change) : outcomeOf(reasons.next().value)));
}

/** What a Stripe event says about a payment, or the reason it says nothing. */
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
