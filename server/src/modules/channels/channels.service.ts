import { randomUUID } from 'node:crypto';
import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { randomToken, type SealedPlace } from '../../lib/crypto.ts';
import { isUuid } from '../../lib/text.ts';
import { recordEvent } from '../activity/index.ts';
import * as repo from './channels.repo.ts';
import type { CreateChannelInput, Platform, UpdateChannelInput } from './channels.schemas.ts';

/** Where a channel's sealed bot token and secret token live: each opens only there. */
const channelSecretPlaces = (channelId: string): Record<'botToken' | 'secretToken', SealedPlace> => ({
  botToken: { column: 'channels.bot_token_sealed', row: channelId },
  secretToken: { column: 'channels.secret_sealed', row: channelId },
});

function webhookUrl(deps: Deps, platform: Platform, channelId: string): string {
  return `${deps.config.publicUrl}/${platform}/bot/${channelId}`;
}

/** 32 random bytes in base64url: within Telegram's allowed A-Z a-z 0-9 _ - for secret_token. */
const newSecretToken = () => randomToken(32);

/** The secret token (messengerone only) is returned this once, for the owner's setWebhook call. */
export async function createChannel(deps: Deps, accountId: number, input: CreateChannelInput, request: RequestInfo) {
  const channelId = randomUUID();
  const secretToken = input.platform === 'messengerone' ? newSecretToken() : null;
  const places = channelSecretPlaces(channelId);
  await deps.db.transaction(async (tx) => {
    await repo.insertChannel(tx, {
      id: channelId,
      account_id: accountId,
      platform: input.platform,
      name: input.name,
      bot_token_sealed: deps.secretBox.seal(input.botToken, places.botToken),
      secret_sealed: secretToken && deps.secretBox.seal(secretToken, places.secretToken),
      created_at: deps.clock.now(),
    });
    await recordEvent(tx, deps.clock, 'channel.created', { accountId }, request, { channel_id: channelId, platform: input.platform });
  });
  return { channelId, webhookUrl: webhookUrl(deps, input.platform, channelId), secretToken };
}

const channelItem = (deps: Deps, row: repo.ChannelRow) => ({
  channelId: row.id,
  platform: row.platform,
  name: row.name,
  webhookUrl: webhookUrl(deps, row.platform, row.id),
  createdAt: row.created_at.toISOString(),
});

export async function listChannels(deps: Deps, accountId: number) {
  const rows = await repo.channelsOf(deps.db, accountId);
  return { items: rows.map((row) => channelItem(deps, row)) };
}

/** Another account's channel answers exactly like a missing one; an id that is not a UUID cannot exist. */
const noSuchChannel = () => new AppError('NOT_FOUND', 'No such channel.');

/**
 * Renames the channel, replaces its bot token, or gives it a new secret token. Deliveries
 * are checked against the new secrets from the commit on, on every instance (the channels
 * trigger of migration 0008 tells the others). A new secret token is returned this once:
 * until the owner's setWebhook passes it to Telegram, Telegram's deliveries are refused with
 * 401 and it retries them.
 */
export async function updateChannel(deps: Deps, accountId: number, input: UpdateChannelInput, request: RequestInfo) {
  if (!isUuid(input.channelId)) throw noSuchChannel();
  const id = input.channelId.toLowerCase();
  const places = channelSecretPlaces(id);
  const { row, secretToken } = await deps.db.transaction(async (tx) => {
    const current = await repo.lockChannel(tx, id, accountId);
    if (!current) throw noSuchChannel();
    if (input.rotateSecretToken && current.platform !== 'messengerone') {
      throw new AppError('VALIDATION_FAILED', 'Only messengerone channels have a secret token.', {
        issues: [{ path: 'rotateSecretToken', message: 'messengertwo deliveries are signed with the bot token: replace botToken instead' }],
      });
    }
    const secretToken = input.rotateSecretToken ? newSecretToken() : null;
    const updated = await repo.updateChannelRow(tx, id, {
      name: input.name ?? null,
      botTokenSealed: input.botToken === undefined ? null : deps.secretBox.seal(input.botToken, places.botToken),
      secretSealed: secretToken && deps.secretBox.seal(secretToken, places.secretToken),
    });
    const changed = [input.name !== undefined && 'name', input.botToken !== undefined && 'bot_token', secretToken !== null && 'secret_token'].filter(Boolean);
    await recordEvent(tx, deps.clock, 'channel.updated', { accountId }, request, { channel_id: id, changed });
    return { row: updated, secretToken };
  });
  deps.webhookSecrets.evictGroup(accountId);
  return { ...channelItem(deps, row), secretToken };
}

/**
 * Deletes the channel and its messages. Its webhook URL answers 404 from then on, and
 * deliveries already kept are marked ignored when they are processed.
 */
export async function deleteChannel(deps: Deps, accountId: number, channelId: string, request: RequestInfo) {
  if (!isUuid(channelId)) throw noSuchChannel();
  const id = channelId.toLowerCase();
  await deps.db.transaction(async (tx) => {
    if (!(await repo.deleteChannelRow(tx, id, accountId))) throw noSuchChannel();
    await recordEvent(tx, deps.clock, 'channel.deleted', { accountId }, request, { channel_id: id });
  });
  deps.webhookSecrets.evictGroup(accountId);
  return { success: true as const };
}

/** Oldest first, like a chat; another account's channel answers exactly like a missing one. */
export async function listMessages(deps: Deps, accountId: number, channelId: string) {
  const exists = isUuid(channelId) && (await repo.channelExists(deps.db, channelId, accountId));
  if (!exists) throw noSuchChannel();
  const rows = await repo.latestMessages(deps.db, channelId);
  return {
    items: rows.map((row) => ({
      conversationId: row.conversation_id,
      externalUserId: row.external_user_id,
      text: row.text,
      createdAt: row.created_at.toISOString(),
    })),
  };
}

/**
 * What a delivery to the channel is checked against: the secret token for messengerone, the
 * bot token for messengertwo. Undefined when there is no such channel on that platform; an
 * id that is not a UUID cannot exist, and must not reach the uuid column as a cast error.
 */
export async function channelWebhookSecret(deps: Deps, platform: Platform, channelId: string): Promise<{ secret: string; accountId: number } | undefined> {
  if (!isUuid(channelId)) return undefined;
  const id = channelId.toLowerCase();
  const channel = await repo.channelSecrets(deps.db, id);
  if (!channel || channel.platform !== platform) return undefined;
  const places = channelSecretPlaces(id);
  const sealed = platform === 'messengertwo' ? { value: channel.bot_token_sealed, place: places.botToken } : { value: channel.secret_sealed, place: places.secretToken };
  return sealed.value === null ? undefined : { secret: deps.secretBox.open(sealed.value, sealed.place), accountId: channel.account_id };
}
