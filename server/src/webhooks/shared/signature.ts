import { createHmac, timingSafeEqual } from 'node:crypto';

/** Node's IncomingHttpHeaders: names are lower-case, a repeated header may arrive as an array. */
export type WebhookHeaders = Record<string, string | string[] | undefined>;

export type SignatureFailure = 'missing' | 'malformed' | 'mismatch' | 'stale';

/** The delivery is not provably from the provider. Answer 401 and store nothing. */
export class SignatureError extends Error {
  override readonly name = 'SignatureError';
  // The message is built from the reason alone so that neither the secret nor the
  // presented signature can end up in logs.
  constructor(readonly reason: SignatureFailure) {
    super(`webhook signature ${reason}`);
  }
}

export function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** The header value, trimmed; absent or blank counts as missing. */
export function requireHeader(headers: WebhookHeaders, name: string): string {
  const value = headerValue(headers, name)?.trim();
  if (!value) throw new SignatureError('missing');
  return value;
}

const SHA256_HEX = /^[0-9a-f]{64}$/i;

export function isSha256Hex(value: string): boolean {
  return SHA256_HEX.test(value);
}

/**
 * Whether `candidateHex` is the hex of the SHA-256 digest `expected`, in either letter case
 * as the providers' own libraries accept. Compared as bytes in constant time: once the
 * candidate is known to be 64 hex digits both sides are 32 bytes, and that says nothing
 * about the secret.
 */
export function digestMatchesHex(expected: Buffer, candidateHex: string): boolean {
  return isSha256Hex(candidateHex) && timingSafeEqual(expected, Buffer.from(candidateHex, 'hex'));
}

/** HMAC-SHA256 over the concatenation of the parts, raw bytes kept as they are. */
export function hmacSha256(secret: string, ...parts: Array<string | Buffer>): Buffer {
  const hmac = createHmac('sha256', secret);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

/** How a provider writes a timestamped HMAC header: `ts=…;h1=…` (Paddle), `t=…,v1=…` (Stripe). */
export type TimestampedScheme = {
  header: string;
  separator: string;
  timestampKey: string;
  signatureKey: string;
  /** What is signed between the timestamp and the body: ':' (Paddle) or '.' (Stripe). */
  joiner: string;
  toleranceSeconds: number;
};

/**
 * Verifies `HMAC-SHA256(secret, timestamp + joiner + body)` against every signature the
 * header lists, with every secret (rotation on either side), with no early exit so timing
 * does not reveal which pair matched; then the timestamp must be within the tolerance either
 * way, so a signature minted with a skewed clock cannot be replayed longer than that. The
 * timestamp is signed as the text sent, the body as the exact bytes. Unknown keys and
 * signatures that are not SHA-256 hex are skipped (providers add schemes over time; Stripe's
 * test-only v0 is never trusted); nothing usable is `malformed`. An empty secret would make
 * the key public: it never counts as configured.
 */
export function verifyTimestampedHmac(raw: Buffer, headers: WebhookHeaders, scheme: TimestampedScheme, secrets: string[], now: Date): void {
  const timestamps: string[] = [];
  const signatures: string[] = [];
  for (const [key, value] of parseKeyValueHeader(requireHeader(headers, scheme.header), scheme.separator)) {
    if (key === scheme.timestampKey) timestamps.push(value);
    else if (key === scheme.signatureKey && isSha256Hex(value)) signatures.push(value);
  }
  if (timestamps.length !== 1 || signatures.length === 0) throw new SignatureError('malformed');
  const seconds = parseUnixSeconds(timestamps[0]);
  let matched = false;
  for (const secret of secrets.filter((s) => s.length > 0)) {
    const expected = hmacSha256(secret, `${timestamps[0]}${scheme.joiner}`, raw);
    for (const candidate of signatures) matched = digestMatchesHex(expected, candidate) || matched;
  }
  if (!matched) throw new SignatureError('mismatch');
  assertFresh(seconds, now, scheme.toleranceSeconds);
}

/**
 * Splits `k=v<sep>k=v...` into trimmed pairs. Parts without `=` are skipped rather than
 * rejected: providers add keys over time and one odd part must not block a delivery.
 */
function parseKeyValueHeader(value: string, separator: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const part of value.split(separator)) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    pairs.push([part.slice(0, eq).trim(), part.slice(eq + 1).trim()]);
  }
  return pairs;
}

/** Unix seconds as the provider sent them; anything but plain digits is malformed. */
function parseUnixSeconds(text: string): number {
  if (!/^\d{1,12}$/.test(text)) throw new SignatureError('malformed');
  return Number(text);
}

/** Written as `!(... <= ...)` so an invalid `now` (NaN) fails closed as stale. */
function assertFresh(timestampSec: number, now: Date, toleranceSec: number): void {
  if (!(Math.abs(now.getTime() - timestampSec * 1000) <= toleranceSec * 1000)) throw new SignatureError('stale');
}
