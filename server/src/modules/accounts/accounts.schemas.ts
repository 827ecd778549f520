import { z } from 'zod';
import { currentPasswordSchema, emailSchema, messageOutput, passwordSchema, strictInput, tokenSchema } from '../../lib/validation.ts';
// The second factor's own schema: the step-up proof that sensitive changes may carry.
import { stepUpProof } from '../mfa/index.ts';
import { userSchema } from './accounts.profile.ts';

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

export const verifyEmailInput = strictInput({ token: tokenSchema });
export const resendVerificationInput = strictInput({ email: emailSchema });

export const registerOutput = messageOutput.extend({ requires_verification: z.literal(true) });
export const meOutput = z.object({ success: z.literal(true), user: userSchema });

// The account lifecycle (docs/API.md, Account lifecycle).
export const changeEmailInput = strictInput({ new_email: emailSchema, password: currentPasswordSchema.optional(), ...stepUpProof });
export const confirmEmailChangeInput = strictInput({ token: tokenSchema });
export const pendingEmailChangeOutput = z.object({
  success: z.literal(true),
  pending: z
    .object({ new_email: z.string(), requested_at: z.string(), expires_at: z.string() })
    .nullable()
    .describe('The change waiting for its confirmation link, or null'),
});
export const deleteAccountInput = strictInput({ password: currentPasswordSchema.optional(), ...stepUpProof });

export type RegisterInput = z.infer<typeof registerInput>;
