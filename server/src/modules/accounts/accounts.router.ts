import { z } from 'zod';
import { messageOutput, noInput, successOutput } from '../../lib/validation.ts';
import { authedProcedure, passwordConfirmingProcedure, publicProcedure } from '../../trpc/procedures.ts';
import { AUTH_ROUTE_ERRORS, authRoute } from '../../trpc/rest-meta.ts';
import { deleteAccount } from './accounts.deletion.ts';
import { cancelEmailChange, changeEmail, confirmEmailChange, showPendingEmailChange } from './accounts.email-change.ts';
import { me } from './accounts.profile.ts';
import { updateProfile } from './accounts.profile-change.ts';
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

const { noCredentials: NO_CREDENTIALS, wrongPassword: WRONG_PASSWORD, invalidBody: INVALID_BODY } = AUTH_ROUTE_ERRORS;

/** An account from registration to deletion: its address, its profile. Merged into `auth.*` by server/src/router.ts. */
export const accountsProcedures = {
  register: publicProcedure
    .meta(authRoute('POST', 'register', 'Create an account; a confirmation link is e-mailed', {
      successStatus: 201,
      errors: { 400: INVALID_BODY, 429: 'Too many registrations from this address or IP' },
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
      errors: { 400: 'INVALID_TOKEN: unknown, used or expired; or an invalid body' },
    }))
    .input(verifyEmailInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => verifyEmail(ctx.deps, input.token, ctx.request)),

  resendVerification: publicProcedure
    .meta(authRoute('POST', 'resend-verification', 'Send a new confirmation link (same answer for every address)', {
      errors: { 400: 'The e-mail is missing or invalid, or the body is not JSON', 429: 'Too many requests for this address or IP' },
    }))
    .input(resendVerificationInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => resendVerification(ctx.deps, input.email, ctx.request)),

  me: authedProcedure
    .meta(authRoute('GET', 'me', 'The calling account (Bearer JWT, Bearer API key or the svc_token cookie)', {
      protect: true,
      beforeMfaSetup: true,
      errors: { 401: NO_CREDENTIALS },
    }))
    .input(z.void())
    .output(meOutput)
    .query(({ ctx }) => ({ success: true as const, user: me(ctx.auth) })),

  changeEmail: passwordConfirmingProcedure(changeEmailInput)
    .meta(authRoute('POST', 'email/change', 'Move the account to another address, once that address confirms', {
      protect: true,
      errors: { 400: INVALID_BODY, 401: `${NO_CREDENTIALS}, or ${WRONG_PASSWORD}`, 429: 'Too many changes or password checks' },
    }))
    .output(messageOutput)
    .mutation(({ ctx, input }) => changeEmail(ctx.deps, ctx.auth, input, ctx.request)),

  pendingEmailChange: authedProcedure
    .meta(authRoute('GET', 'email/pending', 'The e-mail change waiting for its confirmation link, if any', {
      protect: true,
      errors: { 401: NO_CREDENTIALS },
    }))
    .input(z.void())
    .output(pendingEmailChangeOutput)
    .query(({ ctx }) => showPendingEmailChange(ctx.deps, ctx.auth)),

  cancelEmailChange: authedProcedure
    .meta(authRoute('POST', 'email/cancel', 'Cancel the pending e-mail change: its link stops working', {
      protect: true,
      errors: { 400: INVALID_BODY, 401: NO_CREDENTIALS },
    }))
    .input(noInput)
    .output(messageOutput)
    .mutation(({ ctx }) => cancelEmailChange(ctx.deps, ctx.auth, ctx.request)),

  confirmEmailChange: publicProcedure
    .meta(authRoute('POST', 'email/confirm', 'Confirm a new address with the token mailed to it', {
      errors: { 400: 'INVALID_TOKEN: unknown, used or expired, or the address was taken meanwhile; or an invalid body', 429: 'Too many tries from this IP' },
    }))
    .input(confirmEmailChangeInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => confirmEmailChange(ctx.deps, input.token, ctx.request)),

  deleteAccount: passwordConfirmingProcedure(deleteAccountInput)
    .meta(authRoute('POST', 'account/delete', 'Delete the account with its sessions, key, sites, channels and messages', {
      protect: true,
      errors: { 400: INVALID_BODY, 401: `${NO_CREDENTIALS}, or ${WRONG_PASSWORD}`, 429: 'Too many password checks for this session' },
    }))
    .output(successOutput)
    .mutation(({ ctx, input }) => deleteAccount(ctx.deps, ctx.auth, input, ctx.request)),

  updateProfile: authedProcedure
    .meta(authRoute('POST', 'profile', 'Change the name or company (company: null clears it); answers the account as /me does', {
      protect: true,
      errors: { 400: `${INVALID_BODY}, or it has neither name nor company`, 401: NO_CREDENTIALS },
    }))
    .input(updateProfileInput)
    .output(updateProfileOutput)
    .mutation(async ({ ctx, input }) => ({ success: true as const, user: (await updateProfile(ctx.deps, ctx.auth, input, ctx.request)).user })),
};
