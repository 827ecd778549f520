import { z } from 'zod';
import { integerField, objectField, parseJsonObject, readFields, stringField } from '../shared/payload.ts';
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

/** The fields of a Stripe `Event` the scheme reads. */
export const stripePayload = z
  .looseObject({
    id: stringField('id'),
    type: stringField('type'),
    created: integerField('created'),
    data: objectField('data', { object: objectField('object') }),
  })
  .meta({ description: 'A Stripe `Event`.' });

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
  const body = readFields(stripePayload, parseJsonObject(raw));
  return { id: body.id, type: body.type, created: body.created, object: body.data.object };
}
