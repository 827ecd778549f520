import { z } from 'zod';
import { authedProcedure, passwordConfirmingProcedure } from '../access/index.ts';
import { authRoute, ROUTE_ERRORS } from '../../trpc/rest-meta.ts';
import { addPasskey, passkeyOptions, removePasskey } from './mfa.passkeys.ts';
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
  stepUpInput,
  stepUpOutput,
} from './mfa.schemas.ts';
import { stepUpSession, stepUpState } from './mfa.step-up.ts';
import { disableTotp, enableTotp, mfaStatus, regenerateRecoveryCodes, setupTotp } from './mfa.service.ts';
import { successOutput } from '../../lib/validation.ts';

/** What a route that always takes its own proof of the second factor (not step-up's) answers when the proof is wrong. */
const OWN_PROOF = { INVALID_CODE: ROUTE_ERRORS.stepUp.INVALID_CODE, RATE_LIMITED: ROUTE_ERRORS.stepUp.RATE_LIMITED };

/** The account's second factor, under /api/v1/auth/mfa; merged into `auth.*` by server/src/router.ts. */
export const mfaProcedures = {
  mfaStatus: authedProcedure
    .meta(authRoute('GET', 'mfa', 'The second factor: authenticator on or off, passkeys, recovery codes left', { protect: true, beforeMfaSetup: true }))
    .input(z.void())
    .output(mfaStatusOutput)
    .query(({ ctx }) => mfaStatus(ctx.deps, ctx.auth)),

  stepUpStatus: authedProcedure
    .meta(authRoute('GET', 'step-up', "Whether a sensitive change needs the second factor's proof now, and until when this session needs none", { protect: true, beforeMfaSetup: true }))
    .input(z.void())
    .output(stepUpOutput)
    .query(({ ctx }) => stepUpState(ctx.deps, ctx.auth)),

  stepUp: authedProcedure
    .meta(authRoute('POST', 'step-up', 'Prove the second factor for this session ahead of a change: no new proof for 5 minutes', {
      protect: true,
      errors: {
        FORBIDDEN: 'called with an API key, which has no session to step up (it gives the proof with each change)',
        CONFLICT: 'the account has no second factor',
        INVALID_CODE: ROUTE_ERRORS.stepUp.INVALID_CODE,
        RATE_LIMITED: ROUTE_ERRORS.stepUp.RATE_LIMITED,
      },
    }))
    .input(stepUpInput)
    .output(stepUpOutput)
    .mutation(({ ctx, input }) => stepUpSession(ctx.deps, ctx.auth, input, ctx.request)),

  setupTotp: passwordConfirmingProcedure(setupTotpInput)
    .meta(authRoute('POST', 'mfa/totp/setup', 'A new authenticator secret and its otpauth:// URL; on once a code from it is given', {
      protect: true,
      beforeMfaSetup: true,
      stepUp: true,
      errors: { CONFLICT: 'an authenticator app is already on' },
    }))
    .output(setupTotpOutput)
    .mutation(({ ctx, input }) => setupTotp(ctx.deps, ctx.auth, input, ctx.request)),

  enableTotp: authedProcedure
    .meta(authRoute('POST', 'mfa/totp/enable', 'Turn the authenticator on with a code from it; the first factor comes with ten recovery codes', {
      protect: true,
      beforeMfaSetup: true,
      errors: { INVALID_CODE: 'not the current code of the app set up, or none was set up', CONFLICT: 'the authenticator app is already on' },
    }))
    .input(enableTotpInput)
    .output(recoveryCodesOutput)
    .mutation(({ ctx, input }) => enableTotp(ctx.deps, ctx.auth, input, ctx.request)),

  disableTotp: passwordConfirmingProcedure(disableTotpInput)
    .meta(authRoute('POST', 'mfa/totp/disable', 'Turn the authenticator off, with the password and a code', {
      protect: true,
      beforeMfaSetup: true,
      errors: { ...OWN_PROOF, CONFLICT: 'no authenticator app is on' },
    }))
    .output(successOutput)
    .mutation(({ ctx, input }) => disableTotp(ctx.deps, ctx.auth, input, ctx.request)),

  regenerateRecoveryCodes: passwordConfirmingProcedure(regenerateRecoveryCodesInput)
    .meta(authRoute('POST', 'mfa/recovery-codes', 'Ten new recovery codes; the older ones stop working', {
      protect: true,
      beforeMfaSetup: true,
      errors: {
        ...OWN_PROOF,
        STEP_UP_REQUIRED: 'no `code` or `response`, the proof this route always takes (`methods` names the ways the account has)',
        CONFLICT: 'the account has no second factor',
      },
    }))
    .output(recoveryCodesOutput)
    .mutation(({ ctx, input }) => regenerateRecoveryCodes(ctx.deps, ctx.auth, input, ctx.request)),

  passkeyOptions: passwordConfirmingProcedure(passkeyOptionsInput)
    .meta(authRoute('POST', 'mfa/passkeys/options', 'WebAuthn creation options for a new passkey (valid 5 minutes, once)', {
      protect: true,
      beforeMfaSetup: true,
      stepUp: true,
    }))
    .output(optionsOutput)
    .mutation(({ ctx, input }) => passkeyOptions(ctx.deps, ctx.auth, input, ctx.request)),

  addPasskey: authedProcedure
    .meta(authRoute('POST', 'mfa/passkeys', 'Store the passkey made for those options; the first factor comes with ten recovery codes', {
      protect: true,
      beforeMfaSetup: true,
      errors: { INVALID_CODE: 'the attestation does not answer live options of this account, or does not verify' },
    }))
    .input(addPasskeyInput)
    .output(addPasskeyOutput)
    .mutation(({ ctx, input }) => addPasskey(ctx.deps, ctx.auth, input, ctx.request)),

  removePasskey: passwordConfirmingProcedure(removePasskeyInput)
    .meta(authRoute('POST', 'mfa/passkeys/{id}/remove', 'Remove a passkey of the account', {
      protect: true,
      beforeMfaSetup: true,
      stepUp: true,
      errors: { NOT_FOUND: 'no passkey of this account has that id' },
    }))
    .output(successOutput)
    .mutation(({ ctx, input }) => removePasskey(ctx.deps, ctx.auth, input, ctx.request)),
};
