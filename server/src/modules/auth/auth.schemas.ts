import { z } from 'zod';
import { parseBareEmail } from '../../lib/text.ts';
import { strictInput } from '../../lib/validation.ts';
// The second factor's own schemas: the step-up proof that sensitive changes may carry.
import { stepUpProof } from '../mfa/mfa.schemas.ts';

// A bare address only: a display name or a second address in <> would reach the mailer.
export const emailSchema = z
  .string()
  .trim()
  .max(254, 'must be at most 254 characters')
  .transform((text, ctx) => {
    const email = parseBareEmail(text);
    if (email === undefined) ctx.addIssue({ code: 'custom', message: 'must be a bare e-mail address (local@domain)' });
    return email ?? z.NEVER;
  });

// Never trimmed or truncated: the password is exactly what was typed.
const passwordSchema = z.string().min(8, 'must be at least 8 characters').max(128, 'must be at most 128 characters');

export const registerInput = strictInput({
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

const tokenSchema = z.string().min(1).max(200, 'must be at most 200 characters');
// A password being checked, not set: any length a stored one could have had.
const currentPasswordSchema = z.string().min(1).max(128);

export const verifyEmailInput = strictInput({ token: tokenSchema });
export const resendVerificationInput = strictInput({ email: emailSchema });
export const loginInput = strictInput({ email: emailSchema, password: z.string().min(1).max(128) });

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


// The account lifecycle (docs/API.md, Account lifecycle).
export const forgotPasswordInput = strictInput({ email: emailSchema });
export const resetPasswordInput = strictInput({ token: tokenSchema, password: passwordSchema });
export const changePasswordInput = strictInput({ current_password: currentPasswordSchema, new_password: passwordSchema, ...stepUpProof });
export const rotateApiKeyInput = strictInput({
  grace_seconds: z.number().int().min(0, 'must be 0 to 86400').max(86_400, 'must be 0 to 86400').optional().describe('How long the previous key keeps working (default 0: not at all)'),
  ...stepUpProof,
});
export const rotateApiKeyOutput = z.object({ success: z.literal(true), api_key: z.string() });
export const sessionIdInput = strictInput({ id: z.string().min(1).max(100) });
export const revokeAllSessionsInput = strictInput({
  keep_current: z.boolean().optional().describe("Keep the calling JWT's own session (default true)"),
});
export const revokeAllSessionsOutput = z.object({ success: z.literal(true), revoked: z.number().int() });
export const changeEmailInput = strictInput({ new_email: emailSchema, password: currentPasswordSchema, ...stepUpProof });
export const confirmEmailChangeInput = strictInput({ token: tokenSchema });
export const pendingEmailChangeOutput = z.object({
  success: z.literal(true),
  pending: z
    .object({ new_email: z.string(), requested_at: z.string(), expires_at: z.string() })
    .nullable()
    .describe('The change waiting for its confirmation link, or null'),
});
export const deleteAccountInput = strictInput({ password: currentPasswordSchema, ...stepUpProof });

export const sessionSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  current: z.boolean(),
});
export const sessionsOutput = z.object({ success: z.literal(true), sessions: z.array(sessionSchema) });

export const AUDIT_EVENTS = [
  'account.registered',
  'email.verified',
  'login.succeeded',
  'login.failed',
  'login.locked',
  'logout',
  'session.revoked',
  'password.changed',
  'password.reset',
  'api_key.rotated',
  'email.change_requested',
  'email.changed',
  'email.change_cancelled',
  'account.deleted',
  // The account's sites and channels: the secrets that prove its webhook deliveries.
  'site.created',
  'site.updated',
  'site.deleted',
  'channel.created',
  'channel.updated',
  'channel.deleted',
  // The second factor (modules/mfa).
  'mfa.enabled',
  'mfa.disabled',
  'passkey.added',
  'passkey.removed',
  'recovery_codes.regenerated',
  'recovery_code.used',
  'login.mfa_required',
  'login.mfa_failed',
  // Operators' actions (server/src/admin), each in the acting admin's log (the CLI's without an account).
  'admin.inbox_read',
  'admin.delivery_read',
  'admin.delivery_replayed',
  'admin.deliveries_replayed',
  'admin.deliveries_purged',
  'admin.role_changed',
  'admin.secrets_reencrypted',
  'admin.account_read',
  'admin.sessions_revoked',
  'admin.mfa_reset',
] as const;
export type AuditEvent = (typeof AUDIT_EVENTS)[number];

export const activityOutput = z.object({
  success: z.literal(true),
  items: z.array(z.object({ event: z.enum(AUDIT_EVENTS), at: z.string(), ip: z.string().nullable(), user_agent: z.string().nullable() })),
});

export type User = z.infer<typeof userSchema>;
export type RegisterInput = z.infer<typeof registerInput>;
