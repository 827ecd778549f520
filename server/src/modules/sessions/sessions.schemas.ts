import { z } from 'zod';
import { currentPasswordSchema, emailSchema, strictInput } from '../../lib/validation.ts';
import { userSchema } from '../accounts/index.ts';

export const loginInput = strictInput({ email: emailSchema, password: currentPasswordSchema });
export const loginOutput = z.object({ success: z.literal(true), token: z.string(), user: userSchema });

export const sessionIdInput = strictInput({ id: z.string().min(1).max(100) });
export const revokeAllSessionsInput = strictInput({
  keep_current: z.boolean().optional().describe("Keep the calling JWT's own session (default true)"),
});
export const revokeAllSessionsOutput = z.object({ success: z.literal(true), revoked: z.number().int() });

const sessionSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  via: z.string().describe('How the session began: `password`, `passkey`, or the name of the identity provider'),
  current: z.boolean(),
});
export const sessionsOutput = z.object({ success: z.literal(true), sessions: z.array(sessionSchema) });
