import type { Deps } from '../../deps.ts';
import type { Tx } from '../../lib/db.ts';
import { enqueueOperatorMessages, operatorChatsOf } from '../notifications/index.ts';
import * as repo from './channels.repo.ts';
import { emitEvent, eventOrderingLocks } from '../events/index.ts';

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
  const channel = await repo.visitorChannel(tx, origin.channelId);
  if (!channel) return 'the channel no longer exists';
  const stored = await repo.insertMessage(tx, {
    channel_id: origin.channelId,
    conversation_id: message.conversationId,
    external_user_id: message.externalUserId,
    text: message.text,
    inbox_id: origin.inboxId,
    created_at: origin.receivedAt,
  });
  if (!stored) return undefined;
  await emitEvent(tx, deps.clock, {
    type: 'message.received',
    data: { channel_id: origin.channelId, account_id: channel.account_id, conversation_id: message.conversationId, external_user_id: message.externalUserId, text: message.text },
  });
  const chats = await operatorChatsOf(tx, channel.account_id);
  const text = `${channel.name} (${PLATFORM_LABELS[channel.platform] ?? channel.platform}), ${message.senderName ?? 'a visitor'}:\n${message.text}`;
  await enqueueOperatorMessages(deps, tx, chats.map((chatId) => ({ chatId, text })));
  return undefined;
}

/**
 * The locks that storing messages of these channels takes (storeVisitorMessage), for a chunk
 * of deliveries that takes all its locks before applying any: the ordering lock of each
 * channel's account while `message.received` is wanted.
 */
export async function visitorMessageLocks(tx: Tx, channelIds: string[]): Promise<{ orderings: string[] }> {
  if (!channelIds.length) return { orderings: [] };
  return { orderings: await eventOrderingLocks(tx, 'message.received', await repo.accountsOfChannels(tx, [...new Set(channelIds)])) };
}
