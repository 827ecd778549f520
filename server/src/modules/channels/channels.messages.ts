import type { Deps } from '../../deps.ts';
import type { Tx } from '../../lib/db.ts';
import { enqueueOperatorMessages } from '../notifications/index.ts';

export type VisitorMessage = {
  conversationId: string;
  externalUserId: string;
  senderName: string | undefined;
  text: string;
};

/** Which delivery brought the message: a second run for the same one stores nothing. */
export type MessageOrigin = { channelId: string; inboxId: string; receivedAt: Date };

const PLATFORM_LABELS: Record<string, string> = { messengerone: 'Messenger One', messengertwo: 'Messenger Two' };

/**
 * Stores a visitor's text in its channel's conversation and tells every chat linked to the
 * channel owner's account, all in the caller's transaction. `inbox_id` is unique, so a
 * second run for the same delivery stores nothing and notifies no one. Returns why nothing
 * was stored when the channel is gone.
 */
export async function storeVisitorMessage(deps: Deps, tx: Tx, origin: MessageOrigin, message: VisitorMessage): Promise<string | undefined> {
  const [channel] = await tx.query<{ account_id: number; name: string; platform: string }>(
    { name: 'visitor_channel', text: 'SELECT account_id, name, platform FROM channels WHERE id = $1' },
    [origin.channelId],
  );
  if (!channel) return 'the channel no longer exists';
  const stored = await tx.query(
    {
      name: 'visitor_message_insert',
      text: `INSERT INTO channel_messages (channel_id, conversation_id, external_user_id, text, inbox_id, created_at)
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (inbox_id) DO NOTHING RETURNING id`,
    },
    [origin.channelId, message.conversationId, message.externalUserId, message.text, origin.inboxId, origin.receivedAt],
  );
  if (!stored.length) return undefined;
  const chats = await tx.query<{ chat_id: string }>(
    { name: 'visitor_operator_chats', text: 'SELECT chat_id FROM operator_chats WHERE account_id = $1' },
    [channel.account_id],
  );
  const text = `${channel.name} (${PLATFORM_LABELS[channel.platform] ?? channel.platform}), ${message.senderName ?? 'a visitor'}:\n${message.text}`;
  await enqueueOperatorMessages(deps, tx, chats.map((chat) => ({ chatId: chat.chat_id, text })));
  return undefined;
}
