import { z } from 'zod';

export const linkCodeOutput = z.object({ code: z.string(), expiresAt: z.string() });
export const notificationStatusOutput = z.object({ linked: z.boolean(), chats: z.number().int() });
