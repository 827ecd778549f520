import { z } from 'zod';
import { currentPasswordSchema, strictInput } from '../../lib/validation.ts';
import { stepUpProof } from '../mfa/index.ts';

// Any other text is simply no provider of the account's: 404, as an unknown name is.
const providerName = z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters');

export const oauthProvidersOutput = z.object({
  success: z.literal(true),
  providers: z.array(z.object({ name: z.string(), label: z.string(), start_url: z.string().describe('GET it in the browser to sign in with the provider; add `next` (a path of this site) to come back elsewhere than /account') })),
});

export const identitiesOutput = z.object({
  success: z.literal(true),
  identities: z.array(z.object({ provider: z.string(), label: z.string(), email: z.string().nullable(), linked_at: z.string() })),
  has_password: z.boolean().describe('false for an account made through a provider that has not set a password (with a reset link)'),
});

export const linkIdentityInput = strictInput({
  name: providerName,
  password: currentPasswordSchema.optional().describe('The current password; may be left out by an account without one (see REAUTH_REQUIRED)'),
  ...stepUpProof,
  next: z.string().max(512, 'must be at most 512 characters').optional().describe('A path of this site to come back to once connected (default /account); anything else is ignored'),
});

export const linkIdentityOutput = z.object({
  success: z.literal(true),
  start_url: z.string().describe("Open it in the browser signed in with this session's cookie, within 5 minutes, once: it starts the provider's sign-in that connects it"),
});

export const unlinkIdentityInput = strictInput({
  name: providerName,
  password: currentPasswordSchema.optional().describe('The current password; may be left out by an account without one (see REAUTH_REQUIRED)'),
  ...stepUpProof,
});
