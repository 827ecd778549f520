import type { Deps } from '../deps.ts';
import type { Tx } from '../lib/db.ts';
import { ignored, type InboxEntry, type Outcome } from './inbox.ts';
import type { ViberEvent } from './viber.ts';
import { storeVisitorMessage } from './visitor-messages.ts';

/**
 * A visitor bot on messenger two. Only `message` events with text have an effect; the
 * others (webhook, subscribed, conversation_started, delivered, seen, failed, and
 * non-text messages) are kept in the inbox as 'ignored'.
 */
export async function handleViberEvent(deps: Deps, tx: Tx, event: ViberEvent, entry: InboxEntry): Promise<Outcome> {
  if (event.event !== 'message') return ignored(`event ${event.event} is not handled`);
  if (event.text === undefined || !event.sender) return ignored('not a text message');
  return storeVisitorMessage(deps, tx, entry, {
    conversationId: event.sender.id,
    externalUserId: event.sender.id,
    senderName: event.sender.name,
    text: event.text,
  });
}
