import { safeEqual } from '../../lib/crypto.ts';
import { PayloadError, isRecord, parseJsonObject, requireInteger, requireObject } from '../shared/payload.ts';
import { SignatureError, requireHeader, type WebhookHeaders } from '../shared/signature.ts';

const TELEGRAM_SECRET_HEADER = 'x-telegram-bot-api-secret-token';

export type TelegramMessage = {
  messageId: number;
  chatId: number;
  chatType?: string;
  fromId?: number;
  fromName?: string;
  text?: string;
  date: number;
};

export type TelegramUpdate = {
  updateId: number;
  message?: TelegramMessage;
  raw: Record<string, unknown>;
};

/**
 * Telegram signs nothing: it echoes the `secret_token` given to setWebhook in
 * `X-Telegram-Bot-Api-Secret-Token`, so the check is a constant-time equality.
 */
export function verifyTelegram(raw: Buffer, headers: WebhookHeaders, expectedSecret: string): TelegramUpdate {
  const presented = requireHeader(headers, TELEGRAM_SECRET_HEADER);
  // Telegram only allows 1-256 of A-Z a-z 0-9 _ - in a secret token.
  if (!/^[A-Za-z0-9_-]{1,256}$/.test(presented)) throw new SignatureError('malformed');
  // An empty expected secret means "not configured", never "anything goes".
  if (expectedSecret.length === 0 || !safeEqual(presented, expectedSecret)) {
    throw new SignatureError('mismatch');
  }
  return parseTelegramUpdate(raw);
}

/** Parses a body already verified (the worker reads it back from the inbox). */
export function parseTelegramUpdate(raw: Buffer): TelegramUpdate {
  const body = parseJsonObject(raw);
  const updateId = requireInteger(body, 'update_id');
  // Only `message` is mapped. An `edited_message` is a change to a message already
  // handled (mapping it would store a duplicate and re-run `/start <code>`), and a
  // `channel_post` has no sender to link or answer. Both stay available in `raw`.
  const message = body.message === undefined ? undefined : parseMessage(body.message);
  return message ? { updateId, message, raw: body } : { updateId, raw: body };
}

function parseMessage(value: unknown): TelegramMessage {
  if (!isRecord(value)) throw new PayloadError('payload field message is not an object');
  const chat = requireObject(value, 'chat');
  const message: TelegramMessage = {
    messageId: requireInteger(value, 'message_id'),
    chatId: requireInteger(chat, 'id'),
    date: requireInteger(value, 'date'),
  };
  if (typeof chat.type === 'string') message.chatType = chat.type;
  if (typeof value.text === 'string') message.text = value.text;
  if (isRecord(value.from)) {
    message.fromId = requireInteger(value.from, 'id');
    const name = [value.from.first_name, value.from.last_name].filter((p) => typeof p === 'string' && p !== '');
    if (name.length > 0) message.fromName = name.join(' ');
  }
  return message;
}
