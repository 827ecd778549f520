import { DataTypes } from 'sequelize';
import { declareTable, notNull, nullable, primaryKey } from '../../lib/model.ts';
import type { Platform } from './channels.schemas.ts';

// The channels module's tables, channels and channel_messages (migrations 0002 and 0006).
// Every statement on them is in channels.repo.ts.

/** A row of `channels`: a visitor bot of an account, with its sealed secrets. */
export type ChannelRecord = {
  id: string;
  account_id: number;
  platform: Platform;
  name: string;
  bot_token_sealed: string;
  /** messengerone's secret token; messengertwo has none. */
  secret_sealed: string | null;
  created_at: Date;
};

export const channelsTable = declareTable<ChannelRecord>('channels', {
  id: primaryKey(DataTypes.UUID),
  account_id: notNull(DataTypes.INTEGER),
  platform: notNull(DataTypes.TEXT),
  name: notNull(DataTypes.TEXT),
  bot_token_sealed: notNull(DataTypes.TEXT),
  secret_sealed: nullable(DataTypes.TEXT),
  created_at: notNull(DataTypes.DATE),
});

/** A row of `channel_messages`: a visitor's text, stored once per delivery. */
export type ChannelMessageRecord = {
  /** bigserial: pg returns int8 as a string. */
  id: string;
  channel_id: string;
  conversation_id: string;
  external_user_id: string;
  text: string;
  inbox_id: string | null;
  created_at: Date;
};

export const channelMessagesTable = declareTable<ChannelMessageRecord>('channel_messages', {
  id: primaryKey(DataTypes.BIGINT, { autoIncrement: true }),
  channel_id: notNull(DataTypes.UUID),
  conversation_id: notNull(DataTypes.TEXT),
  external_user_id: notNull(DataTypes.TEXT),
  text: notNull(DataTypes.TEXT),
  inbox_id: nullable(DataTypes.UUID),
  created_at: notNull(DataTypes.DATE),
});
