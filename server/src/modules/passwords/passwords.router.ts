import { messageOutput, successOutput } from '../../lib/validation.ts';
import { passwordConfirmingProcedure, publicProcedure } from '../../trpc/procedures.ts';
import { AUTH_ROUTE_ERRORS, authRoute } from '../../trpc/rest-meta.ts';
import { changePassword } from './passwords.change.ts';
import { forgotPassword, resetPassword } from './passwords.reset.ts';
import { changePasswordInput, forgotPasswordInput, resetPasswordInput } from './passwords.schemas.ts';

const { noCredentials: NO_CREDENTIALS, wrongPassword: WRONG_PASSWORD, invalidBody: INVALID_BODY } = AUTH_ROUTE_ERRORS;

/** A forgotten password, reset by mail, and a change by its owner. Merged into `auth.*` by server/src/router.ts. */
export const passwordsProcedures = {
  forgotPassword: publicProcedure
    .meta(authRoute('POST', 'password/forgot', 'E-mail a link to choose a new password (the same answer for every address)', {
      errors: { 400: INVALID_BODY, 429: 'Too many requests for this address or IP' },
    }))
    .input(forgotPasswordInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => forgotPassword(ctx.deps, input.email, ctx.request)),

  resetPassword: publicProcedure
    .meta(authRoute('POST', 'password/reset', 'Set a new password with the token from the mail; every session ends', {
      errors: { 400: 'INVALID_TOKEN: unknown, used or expired; or an invalid body', 429: 'Too many tries from this IP' },
    }))
    .input(resetPasswordInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => resetPassword(ctx.deps, input.token, input.password, ctx.request)),

  changePassword: passwordConfirmingProcedure(changePasswordInput, 'current_password')
    .meta(authRoute('POST', 'password/change', 'Change the password; every other session ends', {
      protect: true,
      errors: { 400: INVALID_BODY, 401: `${NO_CREDENTIALS}, or ${WRONG_PASSWORD}`, 429: 'Too many password checks for this session' },
    }))
    .output(successOutput)
    .mutation(({ ctx, input }) => changePassword(ctx.deps, ctx.auth, input, ctx.request)),
};
