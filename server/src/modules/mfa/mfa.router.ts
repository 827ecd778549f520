import { z } from 'zod';
import { authedProcedure, passwordConfirmingProcedure } from '../../trpc/procedures.ts';
import { AUTH_ROUTE_ERRORS, authRoute } from '../../trpc/rest-meta.ts';
import { addPasskey, passkeyOptions, removePasskey } from './mfa.passkey-service.ts';
import {
  addPasskeyInput,
  addPasskeyOutput,
  disableTotpInput,
  enableTotpInput,
  mfaStatusOutput,
  optionsOutput,
  passkeyOptionsInput,
  recoveryCodesOutput,
  regenerateRecoveryCodesInput,
  removePasskeyInput,
  setupTotpInput,
  setupTotpOutput,
} from './mfa.schemas.ts';
import { disableTotp, enableTotp, mfaStatus, regenerateRecoveryCodes, setupTotp } from './mfa.service.ts';
import { successOutput } from '../../lib/validation.ts';

const { noCredentials: NO_CREDENTIALS, wrongPassword: WRONG_PASSWORD, invalidBody: BODY } = AUTH_ROUTE_ERRORS;
const STEP_UP = 'STEP_UP_REQUIRED (with `methods`): a session of an account with a second factor must add `code` or `response`';
const WRONG_PROOF = 'INVALID_CODE: the code or passkey answer is wrong (it counts as a failed login); or an invalid body';

/** The account's second factor, under /api/v1/auth/mfa; merged into `auth.*` by server/src/router.ts. */
export const mfaProcedures = {
  mfaStatus: authedProcedure
    .meta(authRoute('GET', 'mfa', 'The second factor: authenticator on or off, passkeys, recovery codes left', { protect: true, beforeMfaSetup: true, errors: { 401: NO_CREDENTIALS } }))
    .input(z.void())
    .output(mfaStatusOutput)
    .query(({ ctx }) => mfaStatus(ctx.deps, ctx.auth)),

  setupTotp: passwordConfirmingProcedure(setupTotpInput)
    .meta(authRoute('POST', 'mfa/totp/setup', 'A new authenticator secret and its otpauth:// URL; on once a code from it is given', {
      protect: true,
      beforeMfaSetup: true,
      errors: { 400: WRONG_PROOF, 401: `${NO_CREDENTIALS}, or ${WRONG_PASSWORD}`, 403: STEP_UP, 409: 'CONFLICT: an authenticator app is already on' },
    }))
    .output(setupTotpOutput)
    .mutation(({ ctx, input }) => setupTotp(ctx.deps, ctx.auth, input, ctx.request)),

  enableTotp: authedProcedure
    .meta(authRoute('POST', 'mfa/totp/enable', 'Turn the authenticator on with a code from it; the first factor comes with ten recovery codes', {
      protect: true,
      beforeMfaSetup: true,
      errors: { 400: 'INVALID_CODE: not the current code of the app set up; or an invalid body', 401: NO_CREDENTIALS, 409: 'CONFLICT: the authenticator app is already on' },
    }))
    .input(enableTotpInput)
    .output(recoveryCodesOutput)
    .mutation(({ ctx, input }) => enableTotp(ctx.deps, ctx.auth, input, ctx.request)),

  disableTotp: passwordConfirmingProcedure(disableTotpInput)
    .meta(authRoute('POST', 'mfa/totp/disable', 'Turn the authenticator off, with the password and a code', {
      protect: true,
      beforeMfaSetup: true,
      errors: { 400: WRONG_PROOF, 401: `${NO_CREDENTIALS}, or ${WRONG_PASSWORD}`, 409: 'CONFLICT: no authenticator app is on' },
    }))
    .output(successOutput)
    .mutation(({ ctx, input }) => disableTotp(ctx.deps, ctx.auth, input, ctx.request)),

  regenerateRecoveryCodes: passwordConfirmingProcedure(regenerateRecoveryCodesInput)
    .meta(authRoute('POST', 'mfa/recovery-codes', 'Ten new recovery codes; the older ones stop working', {
      protect: true,
      beforeMfaSetup: true,
      errors: { 400: WRONG_PROOF, 401: `${NO_CREDENTIALS}, or ${WRONG_PASSWORD}`, 403: 'STEP_UP_REQUIRED (with `methods`): no `code` or `response`, the proof this route always takes', 409: 'CONFLICT: the account has no second factor' },
    }))
    .output(recoveryCodesOutput)
    .mutation(({ ctx, input }) => regenerateRecoveryCodes(ctx.deps, ctx.auth, input, ctx.request)),

  passkeyOptions: passwordConfirmingProcedure(passkeyOptionsInput)
    .meta(authRoute('POST', 'mfa/passkeys/options', 'WebAuthn creation options for a new passkey (valid 5 minutes, once)', {
      protect: true,
      beforeMfaSetup: true,
      errors: { 400: WRONG_PROOF, 401: `${NO_CREDENTIALS}, or ${WRONG_PASSWORD}`, 403: STEP_UP },
    }))
    .output(optionsOutput)
    .mutation(({ ctx, input }) => passkeyOptions(ctx.deps, ctx.auth, input, ctx.request)),

  addPasskey: authedProcedure
    .meta(authRoute('POST', 'mfa/passkeys', 'Store the passkey made for those options; the first factor comes with ten recovery codes', {
      protect: true,
      beforeMfaSetup: true,
      errors: { 400: `INVALID_CODE: the attestation does not answer live options of this account; ${BODY}`, 401: NO_CREDENTIALS },
    }))
    .input(addPasskeyInput)
    .output(addPasskeyOutput)
    .mutation(({ ctx, input }) => addPasskey(ctx.deps, ctx.auth, input, ctx.request)),

  removePasskey: passwordConfirmingProcedure(removePasskeyInput)
    .meta(authRoute('POST', 'mfa/passkeys/{id}/remove', 'Remove a passkey of the account', {
      protect: true,
      beforeMfaSetup: true,
      errors: { 400: WRONG_PROOF, 401: `${NO_CREDENTIALS}, or ${WRONG_PASSWORD}`, 403: STEP_UP, 404: 'NOT_FOUND: no passkey of this account has that id' },
    }))
    .output(successOutput)
    .mutation(({ ctx, input }) => removePasskey(ctx.deps, ctx.auth, input, ctx.request)),
};
