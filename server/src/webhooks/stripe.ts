import {
  SignatureError,
  assertFresh,
  hmacSha256Hex,
  isSha256Hex,
  parseJsonObject,
  parseKeyValueHeader,
  parseUnixSeconds,
  requireHeader,
  requireInteger,
  requireObject,
  requireString,
  safeEqualHex,
  type WebhookHeaders,
} from './signature.ts';

export const STRIPE_SIGNATURE_HEADER = 'stripe-signature';
export const STRIPE_TOLERANCE_SECONDS = 300;

export type StripeEvent = {
  id: string;
  type: string;
  created: number;
  object: Record<string, unknown>;
};

type StripeSignature = { t: string; seconds: number; v1: string[] };

/**
 * Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=...]` over `t + "." + body`. Stripe
 * lists several v1 values while a signing secret is being rolled; any one may match.
 */
export function verifyStripe(raw: Buffer, headers: WebhookHeaders, secret: string, now: Date): StripeEvent {
  const signature = parseStripeSignature(requireHeader(headers, STRIPE_SIGNATURE_HEADER));
  // An empty secret would make the HMAC key public; it never counts as configured.
  if (secret.length === 0 || !matchesAny(raw, signature, secret)) throw new SignatureError('mismatch');
  // stripe-node only rejects old timestamps; a far-future one is refused too so a
  // signature cannot stay replayable past the window.
  assertFresh(signature.seconds, now, STRIPE_TOLERANCE_SECONDS);
  return parseStripeEvent(raw);
}

function parseStripeSignature(header: string): StripeSignature {
  const t: string[] = [];
  const v1: string[] = [];
  for (const [key, value] of parseKeyValueHeader(header, ',')) {
    if (key === 't') t.push(value);
    // v0 is Stripe's test-only scheme and other schemes are unknown: never trusted.
    else if (key === 'v1' && isSha256Hex(value)) v1.push(value);
  }
  if (t.length !== 1 || v1.length === 0) throw new SignatureError('malformed');
  return { t: t[0], seconds: parseUnixSeconds(t[0]), v1 };
}

function matchesAny(raw: Buffer, signature: StripeSignature, secret: string): boolean {
  // The timestamp is signed as the text Stripe sent, and the body as the exact bytes.
  const expected = hmacSha256Hex(secret, `${signature.t}.`, raw);
  let matched = false;
  for (const candidate of signature.v1) matched = safeEqualHex(expected, candidate) || matched;
  return matched;
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
