import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { WebAuthnOptionsJson } from './mfa.webauthn.ts';
import { z } from 'zod';
import { strictInput } from '../../lib/validation.ts';

// Imports nothing of the other modules: they take from here, through the face, the step-up
// proof that sensitive changes may carry and the second step of a sign-in (sessions/).

const base64url = (max: number) => z.string().max(max).regex(/^[A-Za-z0-9_-]*$/, 'must be base64url');

/** A code as typed: six digits from the app, or a recovery code (`xxxxx-xxxxx`). */
export const codeSchema = z.string().trim().min(1, 'must not be empty').max(32, 'must be at most 32 characters');

/**
 * A WebAuthn answer as `@simplewebauthn/browser` makes it. Its inner objects are the
 * browser's and gain fields over the years (Chromium added `publicKey` and
 * `authenticatorData` to attestations), so they are not strict; the signature covers what matters.
 */
const credentialFields = {
  id: base64url(1024).min(1, 'must not be empty'),
  rawId: base64url(1024),
  type: z.literal('public-key'),
  clientExtensionResults: z.looseObject({}).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).nullish(),
};

export const authenticationResponseSchema = z
  .looseObject({
    ...credentialFields,
    response: z.looseObject({
      clientDataJSON: base64url(4096),
      authenticatorData: base64url(4096),
      signature: base64url(1024),
      userHandle: base64url(256).nullish(),
    }),
  })
  .transform((value) => value as unknown as AuthenticationResponseJSON);

export const registrationResponseSchema = z
  .looseObject({
    ...credentialFields,
    response: z.looseObject({
      clientDataJSON: base64url(4096),
      attestationObject: base64url(8192),
      transports: z.array(z.string().max(32)).max(10).optional(),
    }),
  })
  .transform((value) => value as unknown as RegistrationResponseJSON);

/** The step-up proof a sensitive change may carry: a code or a passkey answer. */
export const stepUpProof = {
  code: codeSchema.optional().describe('A code from the authenticator app, or a recovery code: the second factor\'s proof where it is asked for'),
  response: authenticationResponseSchema.optional().describe('Or a passkey answer to options from POST /login/passkey/options'),
};

// Optional: an account made through an identity provider has none (passwords.check.ts says what stands in).
const password = z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters').optional();

export const setupTotpInput = strictInput({ password, ...stepUpProof });
export const enableTotpInput = strictInput({ code: codeSchema });
export const disableTotpInput = strictInput({ password, code: codeSchema });
export const regenerateRecoveryCodesInput = strictInput({ password, ...stepUpProof });
export const passkeyOptionsInput = strictInput({ password, ...stepUpProof });
export const addPasskeyInput = strictInput({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters').optional(),
  response: registrationResponseSchema,
});
export const removePasskeyInput = strictInput({ id: z.uuid('must be the id of a passkey of this account'), password, ...stepUpProof });

const mfaToken = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

export const loginMfaInput = strictInput({ mfa_token: mfaToken, ...stepUpProof }).refine(
  (input) => (input.code === undefined) !== (input.response === undefined),
  { message: 'must give code or response, not both', path: ['code'] },
);
export const stepUpInput = strictInput({ ...stepUpProof }).refine((input) => (input.code === undefined) !== (input.response === undefined), {
  message: 'must give code or response, not both',
  path: ['code'],
});
export const stepUpOutput = z.object({
  success: z.literal(true),
  required: z.boolean().describe('Whether the account has a second factor, so that the changes of the step-up list need its proof'),
  methods: z.array(z.enum(['totp', 'passkey', 'recovery_code'])),
  stepped_up_until: z.string().nullable().describe('Until when this session needs no new proof (ISO-8601); null when it must give one (always for an API key)'),
});
export const passkeyLoginOptionsInput = strictInput({ mfa_token: mfaToken.optional() }).optional();
export const loginPasskeyInput = strictInput({ response: authenticationResponseSchema });

const passkeySchema = z.object({ id: z.string(), name: z.string(), created_at: z.string(), last_used_at: z.string().nullable() });
const recoveryCodes = z.array(z.string()).describe('Shown once: store them somewhere safe');

export const mfaStatusOutput = z.object({ success: z.literal(true), totp: z.boolean(), passkeys: z.array(passkeySchema), recovery_codes_left: z.number().int() });
export const setupTotpOutput = z.object({ success: z.literal(true), secret: z.string(), otpauth_url: z.string() });
export const recoveryCodesOutput = z.object({ success: z.literal(true), recovery_codes: recoveryCodes });
/** WebAuthn options as the browser's `navigator.credentials` (or `@simplewebauthn/browser`) takes them, passed through whole. */
const webauthnOptions = z
  .custom<WebAuthnOptionsJson>((value) => typeof (value as { challenge?: unknown } | null)?.challenge === 'string')
  .describe('PublicKeyCredentialCreationOptionsJSON or PublicKeyCredentialRequestOptionsJSON (WebAuthn Level 3)');
export const optionsOutput = z.object({ success: z.literal(true), options: webauthnOptions });
export const addPasskeyOutput = z.object({ success: z.literal(true), passkey: passkeySchema, recovery_codes: recoveryCodes.optional() });
