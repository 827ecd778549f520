import { messageOutput, successOutput } from '../../lib/validation.ts';
import { publicProcedure } from '../../trpc/procedures.ts';
import { passwordConfirmingProcedure } from '../access/index.ts';
import { authRoute, weakPassword } from '../../trpc/rest-meta.ts';
import { changePassword } from './passwords.change.ts';
import { forgotPassword, resetPassword } from './passwords.reset.ts';
import { changePasswordInput, forgotPasswordInput, resetPasswordInput } from './passwords.schemas.ts';

/** A forgotten password, reset by mail, and a change by its owner. Merged into `auth.*` by server/src/router.ts. */
export const passwordsProcedures = {
  forgotPassword: publicProcedure
    .meta(authRoute('POST', 'password/forgot', 'E-mail a link to choose a new password (the same answer for every address)', {
      errors: { RATE_LIMITED: 'too many reset requests from this client IP, or for this address' },
    }))
    .input(forgotPasswordInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => forgotPassword(ctx.deps, input.email, ctx.request)),

  resetPassword: publicProcedure
    .meta(authRoute('POST', 'password/reset', 'Set a new password with the token from the mail; every session ends', {
      errors: {
        INVALID_TOKEN: 'the token is unknown, used or expired',
        VALIDATION_FAILED: weakPassword('password'),
        RATE_LIMITED: 'too many uses of e-mailed tokens from this client IP',
      },
    }))
    .input(resetPasswordInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => resetPassword(ctx.deps, input.token, input.password, ctx.request)),

  changePassword: passwordConfirmingProcedure(changePasswordInput, 'current_password')
    .meta(authRoute('POST', 'password/change', 'Change the password; every other session ends', {
      protect: true,
      stepUp: true,
      errors: { VALIDATION_FAILED: weakPassword('new_password') },
    }))
    .output(successOutput)
    .mutation(({ ctx, input }) => changePassword(ctx.deps, ctx.auth, input, ctx.request)),
};
