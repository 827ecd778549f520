import { DataTypes } from 'sequelize';
import { declareTable, notNull, nullable, primaryKey } from '../../lib/model.ts';

// The notifications module's tables (migrations 0002 and 0014): the operator bot's link codes,
// the chats linked to an account, and the newest command applied to each chat. Every
// statement on them is in notifications.repo.ts.

/** A row of `operator_link_codes`: a one-time code, by its hash. */
export type LinkCodeRecord = {
  code_hash: Buffer;
  account_id: number;
  expires_at: Date;
  used_at: Date | null;
};

export const operatorLinkCodesTable = declareTable<LinkCodeRecord>('operator_link_codes', {
  code_hash: primaryKey(DataTypes.BLOB),
  account_id: notNull(DataTypes.INTEGER),
  expires_at: notNull(DataTypes.DATE),
  used_at: nullable(DataTypes.DATE),
});

/** A row of `operator_chats`: a chat that hears of the account's visitors. */
export type OperatorChatRecord = {
  account_id: number;
  /** bigint: pg returns int8 as a string. */
  chat_id: string;
  linked_at: Date;
};

export const operatorChatsTable = declareTable<OperatorChatRecord>('operator_chats', {
  account_id: primaryKey(DataTypes.INTEGER),
  chat_id: primaryKey(DataTypes.BIGINT),
  linked_at: notNull(DataTypes.DATE),
});

/** A row of `operator_chat_updates`: the newest `/start` or `/stop` applied to a chat, by Telegram's update_id. */
export type OperatorChatUpdateRecord = {
  /** bigint: pg returns int8 as a string. */
  chat_id: string;
  update_id: string;
};

export const operatorChatUpdatesTable = declareTable<OperatorChatUpdateRecord>('operator_chat_updates', {
  chat_id: primaryKey(DataTypes.BIGINT),
  update_id: notNull(DataTypes.BIGINT),
});
