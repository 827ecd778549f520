import { AppError } from '../../errors/errors.ts';
import { applySubscriptionChange, subscriptionChangeLocks, type SubscriptionChange } from '../../modules/billing/index.ts';
import { defineProvider, ignored, outcomeOf } from '../provider.ts';
import { paddlePayload, parsePaddleEvent, verifyPaddle, type PaddleEvent } from '../schemes/paddle.ts';
import { isRecord } from '../shared/payload.ts';

/** The subscription billing provider (Paddle Billing) at POST /billingprovider/webhook. */
export const billing = defineProvider({
  name: 'billing',
  route: '/billingprovider/webhook',
  async secret(deps) {
    const secrets = deps.config.billingWebhookSecrets;
    if (!secrets.length) throw new AppError('SERVICE_UNAVAILABLE', 'BILLING_WEBHOOK_SECRET is not set.');
    return { secret: secrets };
  },
  verify: verifyPaddle,
  externalId: (event) => event.eventId,
  parse: parsePaddleEvent,
  payload: paddlePayload,
  async handle(deps, tx, event) {
    const change = changeOf(event);
    if (typeof change === 'string') return ignored(change);
    return outcomeOf(await applySubscriptionChange(deps, tx, change));
  },
  locks(deps, tx, items) {
    return subscriptionChangeLocks(
      tx,
      items.flatMap(({ event }) => {
        const change = changeOf(event);
        return typeof change === 'string' ? [] : [change];
      }),
    );
  },
});

/** The subscription change an event makes, or why it makes none. */
function changeOf(event: PaddleEvent): SubscriptionChange | string {
  if (!event.eventType.startsWith('subscription.')) return `event type ${event.eventType} is not handled`;
  return readSubscription(event.data, event.occurredAt);
}

/** The subscription a `subscription.*` event describes, or why it describes none. */
function readSubscription(data: Record<string, unknown>, occurredAt: Date): SubscriptionChange | string {
  if (typeof data.id !== 'string' || typeof data.status !== 'string') return 'subscription id or status missing';
  const customData = isRecord(data.custom_data) ? data.custom_data : {};
  const accountId = accountIdFrom(customData.account_id);
  if (accountId === undefined) return 'no custom_data.account_id';
  const firstItem = Array.isArray(data.items) && isRecord(data.items[0]) ? data.items[0] : {};
  const price = isRecord(firstItem.price) ? firstItem.price : {};
  return { id: data.id, status: data.status, accountId, priceId: typeof price.id === 'string' ? price.id : undefined, occurredAt };
}

/** custom_data is whatever the checkout put there: accept 42 and "42", nothing else. */
function accountIdFrom(value: unknown): number | undefined {
  const id = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;
  return Number.isSafeInteger(id) && (id as number) > 0 && (id as number) <= 2_147_483_647 ? (id as number) : undefined;
}
