import type { Queryable } from '../../lib/db.ts';
import { sealedColumn } from '../../lib/sealed-column.ts';
import { LIST_LIMIT } from '../lists.ts';
import type { ChannelMessageRecord, ChannelRecord } from './channels.model.ts';

// Every statement on channels and channel_messages (channels.model.ts). The statements of
// webhook deliveries keep a name, so each connection prepares them once.

export async function insertChannel(tx: Queryable, channel: ChannelRecord): Promise<void> {
  await tx.query(
    `INSERT INTO channels (id, account_id, platform, name, bot_token_sealed, secret_sealed, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [channel.id, channel.account_id, channel.platform, channel.name, channel.bot_token_sealed, channel.secret_sealed, channel.created_at],
  );
}

export type ChannelRow = Pick<ChannelRecord, 'id' | 'platform' | 'name' | 'created_at'>;

export function channelsOf(db: Queryable, accountId: number): Promise<ChannelRow[]> {
  return db.query<ChannelRow>('SELECT id, platform, name, created_at FROM channels WHERE account_id = $1 ORDER BY created_at, id', [accountId]);
}

/** The account's channel's platform, its row locked; undefined for no such channel. */
export async function lockChannel(tx: Queryable, id: string, accountId: number): Promise<Pick<ChannelRecord, 'platform'> | undefined> {
  const [current] = await tx.query<Pick<ChannelRecord, 'platform'>>('SELECT platform FROM channels WHERE id = $1 AND account_id = $2 FOR UPDATE', [id, accountId]);
  return current;
}

/** Renames the channel or replaces its sealed secrets (null: keep). */
export async function updateChannelRow(tx: Queryable, id: string, change: { name: string | null; botTokenSealed: string | null; secretSealed: string | null }): Promise<ChannelRow> {
  const [updated] = await tx.query<ChannelRow>(
    `UPDATE channels SET name = COALESCE($2, name), bot_token_sealed = COALESCE($3, bot_token_sealed), secret_sealed = COALESCE($4, secret_sealed)
     WHERE id = $1 RETURNING id, platform, name, created_at`,
    [id, change.name, change.botTokenSealed, change.secretSealed],
  );
  return updated;
}

/** Deletes the account's channel (its messages go by cascade); false for no such channel. */
export async function deleteChannelRow(tx: Queryable, id: string, accountId: number): Promise<boolean> {
  return (await tx.query('DELETE FROM channels WHERE id = $1 AND account_id = $2 RETURNING id', [id, accountId])).length > 0;
}

export async function channelExists(db: Queryable, id: string, accountId: number): Promise<boolean> {
  return (await db.query('SELECT id FROM channels WHERE id = $1 AND account_id = $2', [id, accountId])).length > 0;
}

const CHANNEL_SECRETS = {
  name: 'channel_webhook_secret',
  text: 'SELECT platform, bot_token_sealed, secret_sealed, account_id FROM channels WHERE id = $1',
};

export type ChannelSecrets = Pick<ChannelRecord, 'platform' | 'bot_token_sealed' | 'secret_sealed' | 'account_id'>;

export async function channelSecrets(db: Queryable, id: string): Promise<ChannelSecrets | undefined> {
  const [channel] = await db.query<ChannelSecrets>(CHANNEL_SECRETS, [id]);
  return channel;
}

/** The channel a visitor's message is for, as its notice names it. */
export async function visitorChannel(tx: Queryable, id: string): Promise<Pick<ChannelRecord, 'account_id' | 'name' | 'platform'> | undefined> {
  const [channel] = await tx.query<Pick<ChannelRecord, 'account_id' | 'name' | 'platform'>>(
    { name: 'visitor_channel', text: 'SELECT account_id, name, platform FROM channels WHERE id = $1' },
    [id],
  );
  return channel;
}

/** The accounts that own these channels. */
export async function accountsOfChannels(tx: Queryable, ids: string[]): Promise<number[]> {
  const rows = await tx.query<Pick<ChannelRecord, 'account_id'>>('SELECT DISTINCT account_id FROM channels WHERE id = ANY($1::uuid[])', [ids]);
  return rows.map((row) => row.account_id);
}

/** Stores a delivery's message once: false when the delivery's message was stored before. */
export async function insertMessage(tx: Queryable, message: Omit<ChannelMessageRecord, 'id'>): Promise<boolean> {
  const stored = await tx.query(
    {
      name: 'visitor_message_insert',
      text: `INSERT INTO channel_messages (channel_id, conversation_id, external_user_id, text, inbox_id, created_at)
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (inbox_id) DO NOTHING RETURNING id`,
    },
    [message.channel_id, message.conversation_id, message.external_user_id, message.text, message.inbox_id, message.created_at],
  );
  return stored.length > 0;
}

export type MessageRow = Pick<ChannelMessageRecord, 'conversation_id' | 'external_user_id' | 'text' | 'created_at'>;

/** The channel's latest messages, oldest first. */
export function latestMessages(db: Queryable, channelId: string): Promise<MessageRow[]> {
  return db.query<MessageRow>(
    `SELECT conversation_id, external_user_id, text, created_at FROM (
       SELECT * FROM channel_messages WHERE channel_id = $1 ORDER BY created_at DESC, id DESC LIMIT ${LIST_LIMIT}
     ) latest ORDER BY created_at, id`,
    [channelId],
  );
}

/** The channels' sealed bot tokens, for the jobs that cross tables. */
export const sealedBotTokens = sealedColumn('channels.bot_token_sealed', {
  sample: 'SELECT id AS key, bot_token_sealed AS value FROM channels LIMIT 1',
  countNotLike: 'SELECT count(*) AS count FROM channels WHERE bot_token_sealed NOT LIKE $1',
  pageNotLike: 'SELECT id AS key, bot_token_sealed AS value FROM channels WHERE bot_token_sealed NOT LIKE $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3',
  reseal: 'UPDATE channels SET bot_token_sealed = $2 WHERE id = $1 AND bot_token_sealed = $3',
});

/** The channels' sealed secret tokens (messengerone's; null for messengertwo), for the jobs that cross tables. */
export const sealedSecretTokens = sealedColumn('channels.secret_sealed', {
  sample: 'SELECT id AS key, secret_sealed AS value FROM channels WHERE secret_sealed IS NOT NULL LIMIT 1',
  countNotLike: 'SELECT count(*) AS count FROM channels WHERE secret_sealed IS NOT NULL AND secret_sealed NOT LIKE $1',
  pageNotLike: `SELECT id AS key, secret_sealed AS value FROM channels
                WHERE secret_sealed IS NOT NULL AND secret_sealed NOT LIKE $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3`,
  reseal: 'UPDATE channels SET secret_sealed = $2 WHERE id = $1 AND secret_sealed = $3',
});
