import { z } from 'zod';
import { objectField, parseJsonObject, readFields, stringField } from '../shared/payload.ts';
import { verifyTimestampedHmac, type TimestampedScheme, type WebhookHeaders } from '../shared/signature.ts';

/**
 * Paddle Billing: `Paddle-Signature: ts=<unix>;h1=<hex>[;h1=...]` over `ts + ":" + body`.
 * Paddle's own SDK only rejects old timestamps; Gatehouse keeps a symmetric window (docs/WEBHOOKS.md).
 */
const PADDLE_SIGNATURE: TimestampedScheme = {
  header: 'paddle-signature',
  separator: ';',
  timestampKey: 'ts',
  signatureKey: 'h1',
  joiner: ':',
  toleranceSeconds: 300,
};

// Paddle sends RFC 3339 with microseconds (`2024-04-12T10:18:49.621022Z`); Date keeps
// milliseconds, which is enough to order events. Other shapes are refused rather than
// handed to Date's implementation-defined fallback parser.
const RFC_3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const NOT_RFC_3339 = 'payload field occurred_at is not an RFC 3339 timestamp';

/** The fields of a Paddle Billing notification the scheme reads. */
export const paddlePayload = z
  .looseObject({
    event_id: stringField('event_id'),
    event_type: stringField('event_type'),
    occurred_at: stringField('occurred_at')
      .regex(RFC_3339, { error: NOT_RFC_3339 })
      .refine((text) => !Number.isNaN(new Date(text).getTime()), { error: NOT_RFC_3339 })
      .meta({ format: 'date-time' }),
    data: objectField('data'),
  })
  .meta({ description: 'A Paddle Billing notification.' });

export type PaddleEvent = {
  eventId: string;
  eventType: string;
  occurredAt: Date;
  data: Record<string, unknown>;
};

/** Several secrets are accepted so a secret can be rotated without dropping deliveries. */
export function verifyPaddle(raw: Buffer, headers: WebhookHeaders, secrets: string[], now: Date): PaddleEvent {
  verifyTimestampedHmac(raw, headers, PADDLE_SIGNATURE, secrets, now);
  return parsePaddleEvent(raw);
}

/** Parses a body already verified (the worker reads it back from the inbox). */
export function parsePaddleEvent(raw: Buffer): PaddleEvent {
  const body = readFields(paddlePayload, parseJsonObject(raw));
  return { eventId: body.event_id, eventType: body.event_type, occurredAt: new Date(body.occurred_at), data: body.data };
}
