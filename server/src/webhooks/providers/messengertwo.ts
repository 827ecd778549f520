import { defineProvider, ignored } from '../provider.ts';
import { parseViberEvent, verifyViber, viberPayload } from '../schemes/viber.ts';
import { storeMessageOf, visitorBotEndpoint } from './visitor-bot.ts';

/**
 * A visitor bot on messenger two (Viber) at POST /messengertwo/bot/{channelId}. Only
 * `message` events with text have an effect; the others (webhook, subscribed,
 * conversation_started, delivered, seen, failed, and non-text messages) are kept as
 * 'ignored'.
 */
export const messengertwo = defineProvider({
  name: 'messengertwo',
  ...visitorBotEndpoint('messengertwo'),
  verify: (raw, headers, botToken) => verifyViber(raw, headers, botToken),
  externalId: (event) => event.eventId,
  parse: parseViberEvent,
  payload: viberPayload,
  async handle(deps, tx, event, entry) {
    if (event.event !== 'message') return ignored(`event ${event.event} is not handled`);
    if (event.text === undefined || !event.sender) return ignored('not a text message');
    return storeMessageOf(deps, tx, entry, {
      conversationId: event.sender.id,
      externalUserId: event.sender.id,
      senderName: event.sender.name,
      text: event.text,
    });
  },
});
