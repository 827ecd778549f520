import { z } from 'zod';

export const PLATFORMS = ['messengerone', 'messengertwo'] as const;
export type Platform = (typeof PLATFORMS)[number];

export const createChannelInput = z.object({
  platform: z.enum(PLATFORMS),
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  // Messenger two signs deliveries with the bot token, so it must be a real secret.
  botToken: z.string().trim().min(8, 'must be at least 8 characters').max(500, 'must be at most 500 characters'),
});

export const channelIdInput = z.object({ channelId: z.string().min(1).max(100) });

export const createChannelOutput = z.object({ channelId: z.string(), webhookUrl: z.string(), secretToken: z.string().nullable() });

export const channelListOutput = z.object({
  items: z.array(
    z.object({ channelId: z.string(), platform: z.enum(PLATFORMS), name: z.string(), webhookUrl: z.string(), createdAt: z.string() }),
  ),
});

export const messageListOutput = z.object({
  items: z.array(z.object({ conversationId: z.string(), externalUserId: z.string(), text: z.string(), createdAt: z.string() })),
});

export type CreateChannelInput = z.infer<typeof createChannelInput>;
