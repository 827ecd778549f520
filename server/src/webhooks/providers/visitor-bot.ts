import type { Deps } from '../../deps.ts';
import type { Tx } from '../../lib/db.ts';
import { isUuid } from '../../lib/text.ts';
import { channelWebhookSecret, storeVisitorMessage, visitorMessageLocks, type Platform, type VisitorMessage } from '../../modules/channels/index.ts';
import { outcomeOf, type InboxEntry, type Outcome } from '../provider.ts';

/**
 * What the two visitor-bot endpoints (messengerone, messengertwo) share: a channel id in
 * the route, that channel's secret, and a visitor's message stored in its conversation.
 */
export function visitorBotEndpoint(platform: Platform) {
  return {
    route: `/${platform}/bot/:scope`,
    // Anything but a UUID cannot be a channel, and must not reach the uuid column.
    scope: (channelId: string) => (isUuid(channelId) ? channelId.toLowerCase() : undefined),
    notFound: 'No such channel.',
    secret: (deps: Deps, channelId: string) => channelWebhookSecret(deps, platform, channelId),
    inArrivalOrder: true as const,
    locks: (deps: Deps, tx: Tx, items: Array<{ entry: InboxEntry }>) => visitorMessageLocks(tx, items.map(({ entry }) => entry.scope)),
  };
}

/** Stores the message the delivery in `entry` carried, once. */
export async function storeMessageOf(deps: Deps, tx: Tx, entry: InboxEntry, message: VisitorMessage): Promise<Outcome> {
  return outcomeOf(await storeVisitorMessage(deps, tx, { channelId: entry.scope, inboxId: entry.id, receivedAt: entry.receivedAt }, message));
}
