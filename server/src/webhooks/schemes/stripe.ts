import { parseJsonObject, requireInteger, requireObject, requireString } from '../shared/payload.ts';
import { verifyTimestampedHmac, type TimestampedScheme, type WebhookHeaders } from '../shared/signature.ts';

/**
 * Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=...]` over `t + "." + body`. Stripe lists
 * several v1 values while a signing secret is being rolled; any one may match. stripe-node
 * only rejects old timestamps; a far-future one is refused too.
 */
const STRIPE_SIGNATURE: TimestampedScheme = {
  header: 'stripe-signature',
  separator: ',',
  timestampKey: 't',
  signatureKey: 'v1',
  joiner: '.',
  toleranceSeconds: 300,
};

export type StripeEvent = {
  id: string;
  type: string;
  created: number;
  object: Record<string, unknown>;
};

export function verifyStripe(raw: Buffer, headers: WebhookHeaders, secret: string, now: Date): StripeEvent {
  verifyTimestampedHmac(raw, headers, STRIPE_SIGNATURE, [secret], now);
  return parseStripeEvent(raw);
}

/** Parses a body already verified (the worker reads it back from the inbox). */
export function parseStripeEvent(raw: Buffer): StripeEvent {
  const body = parseJsonObject(raw);
  return {
    id: requireString(body, 'id'),
    type: requireString(body, 'type'),
    created: requireInteger(body, 'created'),
    object: requireObject(requireObject(body, 'data'), 'object'),
  };
}
