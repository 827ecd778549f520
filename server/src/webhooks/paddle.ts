import {
  PayloadError,
  SignatureError,
  assertFresh,
  hmacSha256Hex,
  isSha256Hex,
  parseJsonObject,
  parseKeyValueHeader,
  parseUnixSeconds,
  requireHeader,
  requireObject,
  requireString,
  safeEqualHex,
  type WebhookHeaders,
} from './signature.ts';

export const PADDLE_SIGNATURE_HEADER = 'paddle-signature';
export const PADDLE_TOLERANCE_SECONDS = 300;

export type PaddleEvent = {
  eventId: string;
  eventType: string;
  occurredAt: Date;
  data: Record<string, unknown>;
};

type PaddleSignature = { ts: string; seconds: number; h1: string[] };

/**
 * Paddle Billing: `Paddle-Signature: ts=<unix>;h1=<hex>[;h1=...]` over `ts + ":" + body`.
 * Several secrets are accepted so a secret can be rotated without dropping deliveries.
 */
export function verifyPaddle(raw: Buffer, headers: WebhookHeaders, secrets: string[], now: Date): PaddleEvent {
  const signature = parsePaddleSignature(requireHeader(headers, PADDLE_SIGNATURE_HEADER));
  if (!matchesAny(raw, signature, secrets)) throw new SignatureError('mismatch');
  // Paddle's own SDK only rejects old timestamps; the contract asks for a symmetric window
  // so a signature minted with a skewed clock cannot be replayed for longer than 5 minutes.
  assertFresh(signature.seconds, now, PADDLE_TOLERANCE_SECONDS);
  return parsePaddleEvent(raw);
}

function parsePaddleSignature(header: string): PaddleSignature {
  const ts: string[] = [];
  const h1: string[] = [];
  for (const [key, value] of parseKeyValueHeader(header, ';')) {
    if (key === 'ts') ts.push(value);
    // A non-hex h1 can never match; dropping it keeps "nothing usable" distinct as malformed.
    else if (key === 'h1' && isSha256Hex(value)) h1.push(value);
  }
  if (ts.length !== 1 || h1.length === 0) throw new SignatureError('malformed');
  return { ts: ts[0], seconds: parseUnixSeconds(ts[0]), h1 };
}

function matchesAny(raw: Buffer, signature: PaddleSignature, secrets: string[]): boolean {
  let matched = false;
  // An empty secret would make the HMAC key public; it never counts as configured.
  for (const secret of secrets.filter((s) => s.length > 0)) {
    // The timestamp is signed as the text Paddle sent, and the body as the exact bytes.
    const expected = hmacSha256Hex(secret, `${signature.ts}:`, raw);
    for (const candidate of signature.h1) {
      // No early exit: every pair is compared, so timing does not reveal which one matched.
      matched = safeEqualHex(expected, candidate) || matched;
    }
  }
  return matched;
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
