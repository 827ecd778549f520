import { AppError } from '../../errors/errors.ts';
import type { Deps } from '../../deps.ts';
import type { Tx } from '../../lib/db.ts';
import { enqueueOperatorMessages, isNewestChatCommand, linkChatWithCode, unlinkChat } from '../../modules/notifications/index.ts';
import { PROCESSED, defineProvider, ignored, type Outcome } from '../provider.ts';
import { parseTelegramUpdate, telegramPayload, verifyTelegram } from '../schemes/telegram.ts';

const START = /^\/start(?:@\w+)?(?:\s+(\S+))?\s*$/i;
const STOP = /^\/stop(?:@\w+)?\s*$/i;

const REPLIES = {
  linked: 'This chat is now linked to your Gatehouse account. Visitor messages will appear here. Send /stop to unlink.',
  badCode: 'That code is unknown, used or expired. Create a new one in Gatehouse and send /start <code> within 15 minutes.',
  help: 'Send /start <code> with a code from Gatehouse to get visitor messages here, or /stop to unlink this chat.',
  unlinked: 'This chat is unlinked: it will not get visitor messages any more.',
};

/**
 * The operator bot (Telegram) at POST /messengerone/webhook: `/start <code>` links a chat to
 * the account that made the code, `/stop` unlinks it; the bot answers in the chat.
 */
export const operator = defineProvider({
  name: 'operator',
  route: '/messengerone/webhook',
  async secret(deps) {
    const secret = deps.config.operatorBotSecret;
    if (!secret) throw new AppError('SERVICE_UNAVAILABLE', 'OPERATOR_BOT_SECRET is not set.');
    return { secret };
  },
  verify: (raw, headers, secret) => verifyTelegram(raw, headers, secret),
  externalId: (update) => String(update.updateId),
  parse: parseTelegramUpdate,
  payload: telegramPayload,
  async handle(deps, tx, update, entry) {
    const message = update.message;
    if (!message?.text) return ignored('not a text message');
    const chatId = String(message.chatId);
    const start = START.exec(message.text.trim());
    const stop = !start && STOP.test(message.text.trim());
    if ((start || stop) && !(await isNewestChatCommand(tx, chatId, update.updateId))) {
      // Nothing is said in the chat either: the person already had the newer command's answer.
      return ignored('a newer /start or /stop of this chat was applied already');
    }
    if (start) {
      if (!start[1]) return reply(deps, tx, chatId, REPLIES.help, ignored('/start without a code'));
      const linked = await linkChatWithCode(deps, tx, start[1], chatId, entry.receivedAt);
      if (!linked) return reply(deps, tx, chatId, REPLIES.badCode, ignored('unknown, used or expired link code'));
      return reply(deps, tx, chatId, REPLIES.linked, PROCESSED);
    }
    if (stop) {
      await unlinkChat(tx, chatId);
      return reply(deps, tx, chatId, REPLIES.unlinked, PROCESSED);
    }
    return ignored('not a command');
  },
});

async function reply(deps: Deps, tx: Tx, chatId: string, text: string, outcome: Outcome): Promise<Outcome> {
  await enqueueOperatorMessages(deps, tx, [{ chatId, text }]);
  return outcome;
}
