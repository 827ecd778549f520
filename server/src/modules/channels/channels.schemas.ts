import { z } from 'zod';
import { strictInput } from '../../lib/validation.ts';

export const PLATFORMS = ['messengerone', 'messengertwo'] as const;
export type Platform = (typeof PLATFORMS)[number];

const channelName = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
// Messenger two signs deliveries with the bot token, so it must be a real secret.
const botToken = z.string().trim().min(8, 'must be at least 8 characters').max(500, 'must be at most 500 characters');

export const createChannelInput = strictInput({ platform: z.enum(PLATFORMS), name: channelName, botToken });

export const channelIdInput = strictInput({ channelId: z.string().min(1).max(100) });

/**
 * A new name, a new bot token (after it was revoked at the platform), a new secret token
 * (messengerone), or any of them together. Asking for none is refused: a misspelt field
 * would otherwise be a silent no-op.
 */
export const updateChannelInput = channelIdInput
  .extend({ name: channelName.optional(), botToken: botToken.optional(), rotateSecretToken: z.boolean().optional() })
  .refine(
    (input) => input.name !== undefined || input.botToken !== undefined || input.rotateSecretToken === true,
    'must give name, botToken, rotateSecretToken: true, or several of them',
  );

export const createChannelOutput = z.object({ channelId: z.string(), webhookUrl: z.string(), secretToken: z.string().nullable() });

const channelOutput = z.object({ channelId: z.string(), platform: z.enum(PLATFORMS), name: z.string(), webhookUrl: z.string(), createdAt: z.string() });

export const channelListOutput = z.object({ items: z.array(channelOutput) });

/** The new secret token, only when one was asked for: the owner passes it to setWebhook. */
export const updateChannelOutput = channelOutput.extend({ secretToken: z.string().nullable() });

export const messageListOutput = z.object({
  items: z.array(z.object({ conversationId: z.string(), externalUserId: z.string(), text: z.string(), createdAt: z.string() })),
});

export type CreateChannelInput = z.infer<typeof createChannelInput>;
export type UpdateChannelInput = z.infer<typeof updateChannelInput>;
