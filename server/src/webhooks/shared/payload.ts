import { z } from 'zod';
import { utf8Text } from '../../lib/text.ts';

/** The signature was valid but the body cannot be used (not JSON, missing id ...). Answer 400. */
export class PayloadError extends Error {
  override readonly name = 'PayloadError';
}

/** The verified body as text, BOM removed; invalid UTF-8 is a PayloadError. */
export function decodeJsonText(raw: Buffer): string {
  const text = utf8Text(raw);
  if (text === undefined) throw new PayloadError('webhook body is not valid UTF-8');
  return text;
}

export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  let value: unknown;
  const text = decodeJsonText(raw);
  try {
    value = JSON.parse(text);
  } catch {
    throw new PayloadError('webhook body is not valid JSON');
  }
  if (!isRecord(value)) throw new PayloadError('webhook body is not a JSON object');
  // PostgreSQL's text holds no NUL: a delivery with one would be kept and then fail at every
  // try. JSON can carry a NUL only escaped, so a body without the escape has none.
  if (text.includes('\\u0000') && holdsNul(value)) throw new PayloadError('webhook body holds a NUL character (\\u0000), which cannot be stored');
  return value;
}

function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(holdsNul);
  return Object.entries(value).some(([key, field]) => key.includes('\0') || holdsNul(field));
}

/** The longest delivery id kept: providers' own are tens of characters. */
const MAX_DELIVERY_ID = 255;

/**
 * A delivery's id as the inbox keeps it, its key against repeats: 1 to 255 characters, none
 * of them a control character. A longer one cannot be indexed, and a NUL cannot be stored.
 */
export function checkDeliveryId(id: string): string {
  if (id.length === 0 || id.length > MAX_DELIVERY_ID) throw new PayloadError(`the delivery's id must be 1 to ${MAX_DELIVERY_ID} characters`);
  if (/[\u0000-\u001f\u007f]/.test(id)) throw new PayloadError("the delivery's id holds a control character");
  return id;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// A scheme says which fields it reads as a zod schema: its parser checks a payload against
// it, and the API reference shows it (gateway/src/routes/openapi-webhooks.ts). Each field
// names itself in the one problem a refused payload is answered with.
const missing = (key: string, what: string) => `payload field ${key} is missing or not ${what}`;

/** A required non-empty string field of the payload. */
export const stringField = (key: string) => z.string({ error: missing(key, 'a string') }).min(1, { error: missing(key, 'a string') });

/** A required integer field that fits a JS number exactly. */
export const integerField = (key: string) => z.int({ error: missing(key, 'an integer') });

/** A required object field, with the fields read from it; the others are kept as sent. */
export const objectField = <Shape extends z.ZodRawShape>(key: string, shape?: Shape) => z.looseObject(shape ?? ({} as Shape), { error: missing(key, 'an object') });

/**
 * The payload, once `schema` has found the fields it reads as it says: otherwise its first
 * problem, in the schema's order, is the PayloadError. The payload itself comes back, not
 * zod's copy of it.
 */
export function readFields<Schema extends z.ZodType>(schema: Schema, body: Record<string, unknown>): z.output<Schema> {
  const result = schema.safeParse(body);
  if (!result.success) throw new PayloadError(result.error.issues[0].message);
  return body as z.output<Schema>;
}
