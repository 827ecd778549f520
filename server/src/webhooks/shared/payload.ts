/** The signature was valid but the body cannot be used (not JSON, missing id ...). Answer 400. */
export class PayloadError extends Error {
  override readonly name = 'PayloadError';
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
