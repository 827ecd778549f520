import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors.ts';
import { randomToken, type SealedPlace } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/text.ts';
import { LIST_LIMIT } from '../lists.ts';
import type { CreateChannelInput, Platform } from './channels.schemas.ts';

/** Where a channel's sealed bot token and secret token live: each opens only there. */
const channelSecretPlaces = (channelId: string): Record<'botToken' | 'secretToken', SealedPlace> => ({
  botToken: { column: 'channels.bot_token_sealed', row: channelId },
  secretToken: { column: 'channels.secret_sealed', row: channelId },
});

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
  const places = channelSecretPlaces(channelId);
  await deps.db.query(
    `INSERT INTO channels (id, account_id, platform, name, bot_token_sealed, secret_sealed, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      channelId,
      accountId,
      input.platform,
      input.name,
      deps.secretBox.seal(input.botToken, places.botToken),
      secretToken && deps.secretBox.seal(secretToken, places.secretToken),
      deps.clock.now(),
    ],
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

const CHANNEL_SECRETS = {
  name: 'channel_webhook_secret',
  text: 'SELECT platform, bot_token_sealed, secret_sealed, account_id FROM channels WHERE id = $1',
};

/**
 * What a delivery to the channel is checked against: the secret token for messengerone, the
 * bot token for messengertwo. Undefined when there is no such channel on that platform; an
 * id that is not a UUID cannot exist, and must not reach the uuid column as a cast error.
 */
export async function channelWebhookSecret(deps: Deps, platform: Platform, channelId: string): Promise<{ secret: string; accountId: number } | undefined> {
  if (!isUuid(channelId)) return undefined;
  const id = channelId.toLowerCase();
  const [channel] = await deps.db.query<{ platform: string; bot_token_sealed: string; secret_sealed: string | null; account_id: number }>(CHANNEL_SECRETS, [id]);
  if (!channel || channel.platform !== platform) return undefined;
  const places = channelSecretPlaces(id);
  const sealed = platform === 'messengertwo' ? { value: channel.bot_token_sealed, place: places.botToken } : { value: channel.secret_sealed, place: places.secretToken };
  return sealed.value === null ? undefined : { secret: deps.secretBox.open(sealed.value, sealed.place), accountId: channel.account_id };
}
