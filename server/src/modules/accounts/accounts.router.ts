import { z } from 'zod';
import { messageOutput, noInput, successOutput } from '../../lib/validation.ts';
import { publicProcedure } from '../../trpc/procedures.ts';
import { authedProcedure, passwordConfirmingProcedure } from '../access/index.ts';
import { authRoute, weakPassword } from '../../trpc/rest-meta.ts';
import { deleteAccount } from './accounts.deletion.ts';
import { cancelEmailChange, changeEmail, confirmEmailChange, showPendingEmailChange } from './accounts.email-change.ts';
import { me } from './accounts.user.ts';
import { updateProfile } from './accounts.profile.ts';
import {
  changeEmailInput,
  confirmEmailChangeInput,
  deleteAccountInput,
  meOutput,
  pendingEmailChangeOutput,
  registerInput,
  registerOutput,
  resendVerificationInput,
  updateProfileInput,
  updateProfileOutput,
  verifyEmailInput,
} from './accounts.schemas.ts';
import { register, resendVerification, verifyEmail } from './accounts.service.ts';

/** An account from registration to deletion: its address, its profile. Merged into `auth.*` by server/src/router.ts. */
export const accountsProcedures = {
  register: publicProcedure
    .meta(authRoute('POST', 'register', 'Create an account; a confirmation link is e-mailed', {
      successStatus: 201,
      errors: { VALIDATION_FAILED: weakPassword('password'), RATE_LIMITED: 'too many registrations from this client IP, or for this address' },
    }))
    .input(registerInput)
    .output(registerOutput)
    .mutation(async ({ ctx, input }) => {
      const result = await register(ctx.deps, input, ctx.request);
      ctx.response.status = 201;
      return result;
    }),

  verifyEmail: publicProcedure
    .meta(authRoute('POST', 'verify-email', 'Confirm an e-mail address with the token from the mail', {
      errors: { INVALID_TOKEN: 'the token is unknown, used or expired' },
    }))
    .input(verifyEmailInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => verifyEmail(ctx.deps, input.token, ctx.request)),

  resendVerification: publicProcedure
    .meta(authRoute('POST', 'resend-verification', 'Send a new confirmation link (same answer for every address)', {
      errors: { RATE_LIMITED: 'too many resends from this client IP, or for this address' },
    }))
    .input(resendVerificationInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => resendVerification(ctx.deps, input.email, ctx.request)),

  me: authedProcedure
    .meta(authRoute('GET', 'me', 'The calling account (Bearer JWT, Bearer API key or the svc_token cookie)', {
      protect: true,
      beforeMfaSetup: true,
    }))
    .input(z.void())
    .output(meOutput)
    .query(({ ctx }) => ({ success: true as const, user: me(ctx.auth) })),

  changeEmail: passwordConfirmingProcedure(changeEmailInput)
    .meta(authRoute('POST', 'email/change', 'Move the account to another address, once that address confirms', {
      protect: true,
      stepUp: true,
      errors: { RATE_LIMITED: 'too many e-mail change requests for this account' },
    }))
    .output(messageOutput)
    .mutation(({ ctx, input }) => changeEmail(ctx.deps, ctx.auth, input, ctx.request)),

  pendingEmailChange: authedProcedure
    .meta(authRoute('GET', 'email/pending', 'The e-mail change waiting for its confirmation link, if any', {
      protect: true,
    }))
    .input(z.void())
    .output(pendingEmailChangeOutput)
    .query(({ ctx }) => showPendingEmailChange(ctx.deps, ctx.auth)),

  cancelEmailChange: authedProcedure
    .meta(authRoute('POST', 'email/cancel', 'Cancel the pending e-mail change: its link stops working', {
      protect: true,
    }))
    .input(noInput)
    .output(messageOutput)
    .mutation(({ ctx }) => cancelEmailChange(ctx.deps, ctx.auth, ctx.request)),

  confirmEmailChange: publicProcedure
    .meta(authRoute('POST', 'email/confirm', 'Confirm a new address with the token mailed to it', {
      errors: {
        INVALID_TOKEN: 'the token is unknown, used or expired, or another account took the address meanwhile',
        RATE_LIMITED: 'too many uses of e-mailed tokens from this client IP',
      },
    }))
    .input(confirmEmailChangeInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => confirmEmailChange(ctx.deps, input.token, ctx.request)),

  deleteAccount: passwordConfirmingProcedure(deleteAccountInput)
    .meta(authRoute('POST', 'account/delete', 'Delete the account with its sessions, key, sites, channels and messages', {
      protect: true,
      stepUp: true,
    }))
    .output(successOutput)
    .mutation(({ ctx, input }) => deleteAccount(ctx.deps, ctx.auth, input, ctx.request)),

  updateProfile: authedProcedure
    .meta(authRoute('POST', 'profile', 'Change the name or company (company: null clears it); answers the account as /me does', {
      protect: true,
      errors: { VALIDATION_FAILED: 'the body has neither `name` nor `company`', UNAUTHORIZED: 'the account was deleted meanwhile' },
    }))
    .input(updateProfileInput)
    .output(updateProfileOutput)
    .mutation(async ({ ctx, input }) => ({ success: true as const, user: (await updateProfile(ctx.deps, ctx.auth, input, ctx.request)).user })),
};
