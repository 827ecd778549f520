import { z } from 'zod';
import { currentPasswordSchema, emailSchema, messageOutput, NAME_MAX_LENGTH, passwordSchema, strictInput, tokenSchema } from '../../lib/validation.ts';
// The second factor's own schema: the step-up proof that sensitive changes may carry.
import { stepUpProof } from '../mfa/index.ts';
import { userSchema } from './accounts.user.ts';

// A person's name and company, as registration and a profile change take them.
const nameSchema = z.string().trim().min(1, 'must not be empty').max(NAME_MAX_LENGTH, `must be at most ${NAME_MAX_LENGTH} characters`);
/** Empty (once trimmed) or null is no company. */
const companySchema = z
  .string()
  .trim()
  .max(200, 'must be at most 200 characters')
  .nullable()
  .transform((company) => company || null);

export const registerInput = strictInput({
  email: emailSchema,
  password: passwordSchema,
  name: nameSchema,
  company: companySchema.optional().transform((company) => company ?? null),
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
export const updateProfileInput = strictInput({
  name: nameSchema.optional().describe('Trimmed; absent: unchanged'),
  company: companySchema.optional().describe('Trimmed; null or empty clears it; absent: unchanged'),
}).refine((input) => input.name !== undefined || input.company !== undefined, {
  message: 'has nothing to change: send name, company or both',
  // Said only of a body that is otherwise right: a stray field is the one thing to tell.
  when: (payload) => payload.issues.length === 0,
});
export const updateProfileOutput = meOutput;
export const deleteAccountInput = strictInput({ password: currentPasswordSchema.optional(), ...stepUpProof });

export type RegisterInput = z.infer<typeof registerInput>;
export type UpdateProfileInput = z.infer<typeof updateProfileInput>;
