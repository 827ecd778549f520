import type { Deps } from '../deps.ts';
import { sha256 } from '../lib/crypto.ts';
import type { Tx } from '../lib/db.ts';
import { PROCESSED, ignored, type InboxEntry, type Outcome } from './inbox.ts';
import { enqueueOperatorMessages } from './operator-bot.ts';
import type { TelegramUpdate } from './telegram.ts';
import { storeVisitorMessage } from './visitor-messages.ts';

/*
 * Update kinds. Every update is kept in the inbox; only a `message` with `text` has an
 * effect. edited_message would store a second copy of a message (and could replay a
 * `/start`), channel_post has no sender to answer, and media, service messages,
 * callback queries and membership updates have no text to store. They are 'ignored'
 * with the reason, so support can see them and a later version could replay them.
 */

const START = /^\/start(?:@\w+)?(?:\s+(\S+))?\s*$/i;
const STOP = /^\/stop(?:@\w+)?\s*$/i;

const REPLIES = {
  linked: 'This chat is now linked to your Gatehouse account. Visitor messages will appear here. Send /stop to unlink.',
  badCode: 'That code is unknown, used or expired. Create a new one in Gatehouse and send /start <code> within 15 minutes.',
  help: 'Send /start <code> with a code from Gatehouse to get visitor messages here, or /stop to unlink this chat.',
  unlinked: 'This chat is unlinked: it will not get visitor messages any more.',
};

/** The operator bot: `/start <code>` links this chat to the code's account, `/stop` unlinks it. */
export async function handleOperatorUpdate(deps: Deps, tx: Tx, update: TelegramUpdate, entry: InboxEntry): Promise<Outcome> {
  const message = update.message;
  if (!message?.text) return ignored('not a text message');
  const chatId = String(message.chatId);
  const start = START.exec(message.text.trim());
  if (start) {
    if (!start[1]) return reply(deps, tx, chatId, REPLIES.help, ignored('/start without a code'));
    const accountId = await redeemLinkCode(tx, start[1], entry.receivedAt);
    if (accountId === undefined) return reply(deps, tx, chatId, REPLIES.badCode, ignored('unknown, used or expired link code'));
    await tx.query(
      'INSERT INTO operator_chats (account_id, chat_id, linked_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      [accountId, chatId, deps.clock.now()],
    );
    return reply(deps, tx, chatId, REPLIES.linked, PROCESSED);
  }
  if (STOP.test(message.text.trim())) {
    await tx.query('DELETE FROM operator_chats WHERE chat_id = $1', [chatId]);
    return reply(deps, tx, chatId, REPLIES.unlinked, PROCESSED);
  }
  return ignored('not a command');
}

/** Codes are single use and checked against when the delivery arrived, not when it was processed. */
async function redeemLinkCode(tx: Tx, code: string, at: Date): Promise<number | undefined> {
  const [used] = await tx.query<{ account_id: number }>(
    `UPDATE operator_link_codes SET used_at = $2
     WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING account_id`,
    [sha256(normalizeLinkCode(code)), at],
  );
  return used?.account_id;
}

/** People retype codes: case and separators do not matter. */
export function normalizeLinkCode(code: string): string {
  return code.toUpperCase().replace(/[^A-Z0-9]/g, '');
}

async function reply(deps: Deps, tx: Tx, chatId: string, text: string, outcome: Outcome): Promise<Outcome> {
  await enqueueOperatorMessages(deps, tx, [{ chatId, text }]);
  return outcome;
}

/** A visitor bot on messenger one: a text message goes to the conversation of its chat. */
export async function handleVisitorUpdate(deps: Deps, tx: Tx, update: TelegramUpdate, entry: InboxEntry): Promise<Outcome> {
  const message = update.message;
  if (!message) return ignored(`update kind ${updateKind(update)} is not handled`);
  if (message.text === undefined) return ignored('not a text message');
  return storeVisitorMessage(deps, tx, entry, {
    conversationId: String(message.chatId),
    externalUserId: String(message.fromId ?? message.chatId),
    senderName: message.fromName,
    text: message.text,
  });
}

function updateKind(update: TelegramUpdate): string {
  return Object.keys(update.raw).find((key) => key !== 'update_id') ?? 'empty';
}
