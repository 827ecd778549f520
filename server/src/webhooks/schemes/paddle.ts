import { PayloadError, parseJsonObject, requireObject, requireString } from '../shared/payload.ts';
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
  const body = parseJsonObject(raw);
  return {
    eventId: requireString(body, 'event_id'),
    eventType: requireString(body, 'event_type'),
    occurredAt: parseOccurredAt(requireString(body, 'occurred_at')),
    data: requireObject(body, 'data'),
  };
}

// Paddle sends RFC 3339 with microseconds (`2024-04-12T10:18:49.621022Z`); Date keeps
// milliseconds, which is enough to order events. Other shapes are refused rather than
// handed to Date's implementation-defined fallback parser.
function parseOccurredAt(text: string): Date {
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
  const date = new Date(text);
  if (!iso.test(text) || Number.isNaN(date.getTime())) {
    throw new PayloadError('payload field occurred_at is not an RFC 3339 timestamp');
  }
  return date;
}
