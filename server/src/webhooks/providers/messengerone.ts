import { defineProvider, ignored } from '../provider.ts';
import { parseTelegramUpdate, telegramPayload, verifyTelegram, type TelegramUpdate } from '../schemes/telegram.ts';
import { storeMessageOf, visitorBotEndpoint } from './visitor-bot.ts';

/*
 * Update kinds. Every update is kept in the inbox; only a `message` with `text` has an
 * effect. edited_message would store a second copy of a message (and could replay a
 * `/start`), channel_post has no sender to answer, and media, service messages,
 * callback queries and membership updates have no text to store. They are 'ignored'
 * with the reason, so support can see them and a later version could replay them.
 */

/** A visitor bot on messenger one (Telegram) at POST /messengerone/bot/{channelId}. */
export const messengerone = defineProvider({
  name: 'messengerone',
  ...visitorBotEndpoint('messengerone'),
  verify: (raw, headers, secret) => verifyTelegram(raw, headers, secret),
  externalId: (update) => String(update.updateId),
  parse: parseTelegramUpdate,
  payload: telegramPayload,
  async handle(deps, tx, update, entry) {
    const message = update.message;
    if (!message) return ignored(`update kind ${updateKind(update)} is not handled`);
    if (message.text === undefined) return ignored('not a text message');
    return storeMessageOf(deps, tx, entry, {
      conversationId: String(message.chatId),
      externalUserId: String(message.fromId ?? message.chatId),
      senderName: message.fromName,
      text: message.text,
    });
  },
});

function updateKind(update: TelegramUpdate): string {
  return Object.keys(update.raw).find((key) => key !== 'update_id') ?? 'empty';
}
