import { z } from 'zod';

// The e-mail check is deliberately plain: one @, no spaces, a dot in the domain, at most 254.
const emailSchema = z
  .string()
  .trim()
  .max(254, 'must be at most 254 characters')
  .regex(/^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/, 'must be a valid e-mail address')
  .transform((email) => email.toLowerCase());

// Never trimmed or truncated: the password is exactly what was typed.
const passwordSchema = z.string().min(8, 'must be at least 8 characters').max(128, 'must be at most 128 characters');

export const registerInput = z.object({
  email: emailSchema,
  password: passwordSchema,
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  company: z
    .string()
    .trim()
    .max(200, 'must be at most 200 characters')
    .nullish()
    .transform((company) => company || null),
});

export const verifyEmailInput = z.object({ token: z.string().min(1).max(200) });
export const resendVerificationInput = z.object({ email: emailSchema });
export const loginInput = z.object({ email: emailSchema, password: z.string().min(1).max(128) });

export const userSchema = z.object({
  id: z.number().int(),
  email: z.string(),
  name: z.string(),
  company: z.string().nullable(),
  plan: z.string(),
  role: z.enum(['user', 'admin']),
  api_key: z.string(),
  email_verified: z.boolean(),
  created_at: z.string(),
});

export const messageOutput = z.object({ success: z.literal(true), message: z.string() });
export const registerOutput = messageOutput.extend({ requires_verification: z.literal(true) });
export const loginOutput = z.object({ success: z.literal(true), token: z.string(), user: userSchema });
export const meOutput = z.object({ success: z.literal(true), user: userSchema });
export const logoutOutput = z.object({ success: z.literal(true) });

export type User = z.infer<typeof userSchema>;
export type RegisterInput = z.infer<typeof registerInput>;
