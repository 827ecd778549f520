// The notifications module's face: the operator bot's messages, for channels/, the worker and
// the operator bot's webhook (server/src/webhooks). Its procedures (notifications.router.ts)
// are mounted by server/src/router.ts.
export { enqueueOperatorMessages, sendOperatorMessage, type OperatorMessage } from './notifications.bot.ts';
export { isNewestChatCommand, linkChatWithCode, unlinkChat } from './notifications.service.ts';
export { operatorChatsTable, operatorChatUpdatesTable, operatorLinkCodesTable } from './notifications.model.ts';
export { chatsOf as operatorChatsOf } from './notifications.repo.ts';
