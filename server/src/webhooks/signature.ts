import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

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

/** The signature was valid but the body cannot be used (not JSON, missing id ...). */
export class PayloadError extends Error {
  override readonly name = 'PayloadError';
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

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * Constant-time string equality. Both sides are hashed first so timingSafeEqual always
 * sees 32 bytes: it would throw on a length difference, and an early length check would
 * tell an attacker how long the secret is.
 */
export function safeEqualString(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/** Hex digests compare case-insensitively, like the providers' own libraries accept. */
export function safeEqualHex(expectedHex: string, candidateHex: string): boolean {
  return safeEqualString(expectedHex.toLowerCase(), candidateHex.toLowerCase());
}

export function isSha256Hex(value: string): boolean {
  return /^[0-9a-f]{64}$/i.test(value);
}

/** Hex HMAC-SHA256 over the concatenation of the parts, raw bytes kept as they are. */
export function hmacSha256Hex(secret: string, ...parts: Array<string | Buffer>): string {
  const hmac = createHmac('sha256', secret);
  for (const part of parts) hmac.update(part);
  return hmac.digest('hex');
}

/**
 * Splits `k=v<sep>k=v...` into trimmed pairs. Parts without `=` are skipped rather than
 * rejected: providers add keys over time and one odd part must not block a delivery.
 */
export function parseKeyValueHeader(value: string, separator: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const part of value.split(separator)) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    pairs.push([part.slice(0, eq).trim(), part.slice(eq + 1).trim()]);
  }
  return pairs;
}

/** Unix seconds as the provider sent them; anything but plain digits is malformed. */
export function parseUnixSeconds(text: string | undefined): number {
  if (text === undefined || !/^\d{1,12}$/.test(text)) throw new SignatureError('malformed');
  return Number(text);
}

/** Written as `!(... <= ...)` so an invalid `now` (NaN) fails closed as stale. */
export function assertFresh(timestampSec: number, now: Date, toleranceSec: number): void {
  if (!(Math.abs(now.getTime() - timestampSec * 1000) <= toleranceSec * 1000)) {
    throw new SignatureError('stale');
  }
}

// fatal: invalid UTF-8 is an error rather than silently replaced; the default
// ignoreBOM=false makes the decoder drop a leading UTF-8 BOM.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The verified body as text, BOM removed; invalid UTF-8 is a PayloadError. */
export function decodeJsonText(raw: Buffer): string {
  try {
    return utf8.decode(raw);
  } catch {
    throw new PayloadError('webhook body is not valid UTF-8');
  }
}

export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(decodeJsonText(raw));
  } catch (error) {
    if (error instanceof PayloadError) throw error;
    throw new PayloadError('webhook body is not valid JSON');
  }
  if (!isRecord(value)) throw new PayloadError('webhook body is not a JSON object');
  return value;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A required non-empty string field of the payload. */
export function requireString(source: Record<string, unknown>, key: string): string {
  const value = source[key];
  if (typeof value !== 'string' || value === '') throw new PayloadError(`payload field ${key} is missing or not a string`);
  return value;
}

/** A required integer field that fits a JS number exactly. */
export function requireInteger(source: Record<string, unknown>, key: string): number {
  const value = source[key];
  if (!Number.isSafeInteger(value)) throw new PayloadError(`payload field ${key} is missing or not an integer`);
  return value as number;
}

export function requireObject(source: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = source[key];
  if (!isRecord(value)) throw new PayloadError(`payload field ${key} is missing or not an object`);
  return value;
}
