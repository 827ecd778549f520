import { z } from 'zod';
import { decodeJsonText, integerField, isRecord, parseJsonObject, readFields, stringField } from '../shared/payload.ts';
import { SignatureError, digestMatchesHex, hmacSha256, isSha256Hex, requireHeader, type WebhookHeaders } from '../shared/signature.ts';

const VIBER_SIGNATURE_HEADER = 'x-viber-content-signature';

const USER_ID_MISSING = 'payload user id is missing';

/** The fields of a Viber callback the scheme requires. */
const viberCallback = z.looseObject({ event: stringField('event'), timestamp: integerField('timestamp') });

/** The author of an event (`sender`, or `user` for subscribed and conversation_started), when it is an object. */
const viberUser = z.looseObject({ id: z.string({ error: USER_ID_MISSING }).min(1, { error: USER_ID_MISSING }) });

/** What the scheme reads of a Viber callback: the fields it requires, and the sender when there is one. */
export const viberPayload = viberCallback.extend({ sender: viberUser.optional() }).meta({ description: 'A Viber callback.' });

export type ViberEvent = {
  eventId: string;
  event: string;
  timestamp: number;
  sender?: { id: string; name?: string };
  text?: string;
};

/** Viber: `X-Viber-Content-Signature` is the hex HMAC-SHA256 of the body keyed by the bot token. */
export function verifyViber(raw: Buffer, headers: WebhookHeaders, botToken: string): ViberEvent {
  const presented = requireHeader(headers, VIBER_SIGNATURE_HEADER);
  if (!isSha256Hex(presented)) throw new SignatureError('malformed');
  // An empty token would make the HMAC key public; it never counts as configured.
  if (botToken.length === 0 || !digestMatchesHex(hmacSha256(botToken, raw), presented)) {
    throw new SignatureError('mismatch');
  }
  return parseViberEvent(raw);
}

/** Parses a body already verified (the worker reads it back from the inbox). */
export function parseViberEvent(raw: Buffer): ViberEvent {
  const body = parseJsonObject(raw);
  const { event, timestamp } = readFields(viberCallback, body);
  // Message events name the author `sender`; subscribed / conversation_started name `user`.
  const sender = parseUser(body.sender) ?? parseUser(body.user);
  const userId = sender?.id ?? (typeof body.user_id === 'string' ? body.user_id : '');
  // A token is digits only, so the `:`-joined fallback can never collide with a real one.
  const eventId = messageToken(raw, body.message_token) ?? `${event}:${timestamp}:${userId}`;
  const result: ViberEvent = { eventId, event, timestamp };
  if (sender) result.sender = sender;
  if (isRecord(body.message) && body.message.type === 'text' && typeof body.message.text === 'string') {
    result.text = body.message.text;
  }
  return result;
}

function parseUser(value: unknown): { id: string; name?: string } | undefined {
  if (!isRecord(value)) return undefined;
  const user = readFields(viberUser, value);
  return typeof user.name === 'string' ? { id: user.id, name: user.name } : { id: user.id };
}

/**
 * Viber sends message_token as a bare 64-bit integer (e.g. 5741311803571721087), which
 * JSON.parse rounds to the nearest double (…1088), so two deliveries could share an id.
 * The digits are therefore read from the verified JSON text itself. A regex over the whole
 * text could be fooled by a nested key or by `\"message_token` inside a key, so a small
 * scanner finds the top-level key only. The result must still round to the parsed value,
 * which guards the scanner against ever disagreeing with JSON.parse.
 */
function messageToken(raw: Buffer, parsed: unknown): string | undefined {
  if (typeof parsed === 'string' && /^\d+$/.test(parsed)) return parsed;
  if (typeof parsed !== 'number' || !Number.isInteger(parsed) || parsed < 0) return undefined;
  const literal = topLevelLiteral(decodeJsonText(raw), 'message_token');
  if (literal !== undefined && /^\d+$/.test(literal) && Number(literal) === parsed) return literal;
  // The key was spelled with escapes, or the number had an exponent: exact only if safe.
  return Number.isSafeInteger(parsed) ? String(parsed) : undefined;
}

/**
 * The raw text of the value of a top-level `"key": <number>` pair. The last occurrence
 * wins, as in JSON.parse. Only called on text that JSON.parse accepted, so strings are
 * always terminated.
 */
function topLevelLiteral(json: string, key: string): string | undefined {
  const quotedKey = JSON.stringify(key);
  // Sticky: matches only right after the closing quote. A string followed by no `:` is a
  // value, not a key; a key whose value is not a number resets the result (last wins).
  const afterKey = /\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)?/y;
  let depth = 0;
  let found: string | undefined;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === '"') {
      const end = stringEnd(json, i);
      if (depth === 1 && end - i + 1 === quotedKey.length && json.startsWith(quotedKey, i)) {
        afterKey.lastIndex = end + 1;
        const match = afterKey.exec(json);
        if (match) found = match[1];
      }
      i = end;
    }
  }
  return found;
}

/** Index of the quote closing the string that opens at `start`. */
function stringEnd(json: string, start: number): number {
  let i = start + 1;
  while (json[i] !== '"') i += json[i] === '\\' ? 2 : 1;
  return i;
}
