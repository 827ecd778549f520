// The channels module's face: what the visitor bots' webhooks (server/src/webhooks) use. Its
// procedures (channels.router.ts) are mounted by server/src/router.ts.
export { storeVisitorMessage, visitorMessageLocks, type VisitorMessage } from './channels.messages.ts';
export type { Platform } from './channels.schemas.ts';
export { channelWebhookSecret } from './channels.service.ts';
export { channelMessagesTable, channelsTable } from './channels.model.ts';
