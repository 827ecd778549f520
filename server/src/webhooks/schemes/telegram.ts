import { z } from 'zod';
import { safeEqual } from '../../lib/crypto.ts';
import { integerField, isRecord, objectField, parseJsonObject, readFields } from '../shared/payload.ts';
import { SignatureError, requireHeader, type WebhookHeaders } from '../shared/signature.ts';
import { TELEGRAM_SECRET_TOKEN } from '../../lib/text.ts';

const TELEGRAM_SECRET_HEADER = 'x-telegram-bot-api-secret-token';

const NOT_A_MESSAGE = 'payload field message is not an object';

// The fields of a `message` the scheme requires, in the order they have always been read:
// chat, message_id, then chat.id and date. `text`, `chat.type` and the sender's name are
// read only when they are strings, and the sender (`from`) only when it is an object.
const messageFirst = { chat: objectField('chat'), message_id: integerField('message_id') };
const messageThen = { chat: objectField('chat', { id: integerField('id') }), date: integerField('date') };
const messageOf = <Shape extends z.ZodRawShape>(shape: Shape) => z.looseObject(shape, { error: NOT_A_MESSAGE });
const updateOf = <Message extends z.ZodType>(message: Message) => z.looseObject({ update_id: integerField('update_id'), message: message.optional() });

/** As the parser checks an update: a message in two halves, so that of two faults the one read first is named. */
const telegramUpdate = updateOf(messageOf(messageFirst).and(messageOf(messageThen)));

/** The fields of a Telegram Bot API `Update` the scheme reads, a message's as one object. */
export const telegramPayload = updateOf(messageOf({ ...messageFirst, ...messageThen })).meta({
  description: 'A Telegram Bot API `Update`; only a `message` with `text` has an effect.',
});

const telegramSender = z.looseObject({ id: integerField('id') });

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
  if (!TELEGRAM_SECRET_TOKEN.test(presented)) throw new SignatureError('malformed');
  // An empty expected secret means "not configured", never "anything goes".
  if (expectedSecret.length === 0 || !safeEqual(presented, expectedSecret)) {
    throw new SignatureError('mismatch');
  }
  return parseTelegramUpdate(raw);
}

/** Parses a body already verified (the worker reads it back from the inbox). */
export function parseTelegramUpdate(raw: Buffer): TelegramUpdate {
  const body = parseJsonObject(raw);
  const update = readFields(telegramUpdate, body);
  // Only `message` is mapped. An `edited_message` is a change to a message already
  // handled (mapping it would store a duplicate and re-run `/start <code>`), and a
  // `channel_post` has no sender to link or answer. Both stay available in `raw`.
  const message = update.message === undefined ? undefined : parseMessage(update.message);
  return message ? { updateId: update.update_id, message, raw: body } : { updateId: update.update_id, raw: body };
}

function parseMessage(value: NonNullable<z.output<typeof telegramUpdate>['message']>): TelegramMessage {
  const { chat } = value;
  const message: TelegramMessage = { messageId: value.message_id, chatId: chat.id, date: value.date };
  if (typeof chat.type === 'string') message.chatType = chat.type;
  if (typeof value.text === 'string') message.text = value.text;
  if (isRecord(value.from)) {
    const from = readFields(telegramSender, value.from);
    message.fromId = from.id;
    const name = [from.first_name, from.last_name].filter((p) => typeof p === 'string' && p !== '');
    if (name.length > 0) message.fromName = name.join(' ');
  }
  return message;
}
