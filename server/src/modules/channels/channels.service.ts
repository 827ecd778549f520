import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors.ts';
import { randomToken } from '../../lib/crypto.ts';
import type { CreateChannelInput, Platform } from './channels.schemas.ts';
import { isUuid } from '../../lib/text.ts';

/** Lists return the most recent rows up to this many; the contract has no paging yet. */
export const LIST_LIMIT = 1000;

function webhookUrl(deps: Deps, platform: Platform, channelId: string): string {
  return `${deps.config.publicUrl}/${platform}/bot/${channelId}`;
}

/**
 * The secret token (messenger one only) is returned this once, for the owner's setWebhook
 * call: 32 random bytes in base64url, which is within Telegram's allowed A-Z a-z 0-9 _ -.
 */
export async function createChannel(deps: Deps, accountId: number, input: CreateChannelInput) {
  const channelId = randomUUID();
  const secretToken = input.platform === 'messengerone' ? randomToken(32) : null;
  await deps.db.query(
    `INSERT INTO channels (id, account_id, platform, name, bot_token_sealed, secret_sealed, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [channelId, accountId, input.platform, input.name, deps.secretBox.seal(input.botToken), secretToken && deps.secretBox.seal(secretToken), deps.clock.now()],
  );
  return { channelId, webhookUrl: webhookUrl(deps, input.platform, channelId), secretToken };
}

export async function listChannels(deps: Deps, accountId: number) {
  const rows = await deps.db.query<{ id: string; platform: Platform; name: string; created_at: Date }>(
    'SELECT id, platform, name, created_at FROM channels WHERE account_id = $1 ORDER BY created_at, id',
    [accountId],
  );
  return {
    items: rows.map((row) => ({
      channelId: row.id,
      platform: row.platform,
      name: row.name,
      webhookUrl: webhookUrl(deps, row.platform, row.id),
      createdAt: row.created_at.toISOString(),
    })),
  };
}

type MessageRow = { conversation_id: string; external_user_id: string; text: string; created_at: Date };

/** Oldest first, like a chat; another account's channel answers exactly like a missing one. */
export async function listMessages(deps: Deps, accountId: number, channelId: string) {
  const [channel] = isUuid(channelId)
    ? await deps.db.query('SELECT id FROM channels WHERE id = $1 AND account_id = $2', [channelId, accountId])
    : [];
  if (!channel) throw new AppError('NOT_FOUND', 'No such channel.');
  const rows = await deps.db.query<MessageRow>(
    `SELECT conversation_id, external_user_id, text, created_at FROM (
       SELECT * FROM channel_messages WHERE channel_id = $1 ORDER BY created_at DESC, id DESC LIMIT ${LIST_LIMIT}
     ) latest ORDER BY created_at, id`,
    [channelId],
  );
  return {
    items: rows.map((row) => ({
      conversationId: row.conversation_id,
      externalUserId: row.external_user_id,
      text: row.text,
      createdAt: row.created_at.toISOString(),
    })),
  };
}
