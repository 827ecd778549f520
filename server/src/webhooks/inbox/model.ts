import { DataTypes } from 'sequelize';
import { declareTable, notNull, nullable, primaryKey } from '../../lib/model.ts';
import type { ProviderName } from '../provider.ts';

export const INBOX_STATES = ['received', 'processed', 'ignored', 'dead'] as const;
export type InboxState = (typeof INBOX_STATES)[number];

/** A row of `webhook_inbox` (migrations 0002 and 0006): one verified delivery. Every statement on it is in repo.ts. */
export type InboxRecord = {
  id: string;
  provider: ProviderName;
  scope: string;
  external_id: string;
  payload: Buffer;
  received_at: Date;
  state: InboxState;
  attempts: number;
  last_error: string | null;
  /** Why an entry was 'ignored' (unknown account, price or event type): kept for support. */
  reason: string | null;
  enqueued_at: Date | null;
  processed_at: Date | null;
};

export const webhookInboxTable = declareTable<InboxRecord>('webhook_inbox', {
  id: primaryKey(DataTypes.UUID),
  provider: notNull(DataTypes.TEXT),
  scope: notNull(DataTypes.TEXT, { defaultValue: '' }),
  external_id: notNull(DataTypes.TEXT),
  payload: notNull(DataTypes.BLOB),
  received_at: notNull(DataTypes.DATE),
  state: notNull(DataTypes.TEXT, { defaultValue: 'received' }),
  attempts: notNull(DataTypes.INTEGER, { defaultValue: 0 }),
  last_error: nullable(DataTypes.TEXT),
  reason: nullable(DataTypes.TEXT),
  enqueued_at: nullable(DataTypes.DATE),
  processed_at: nullable(DataTypes.DATE),
});
