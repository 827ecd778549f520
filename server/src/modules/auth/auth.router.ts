import { z } from 'zod';
import { DEVICE_COOKIE, SESSION_COOKIE, type Context } from '../../context.ts';
import { authedProcedure, publicProcedure, router } from '../../trpc.ts';
import { DEVICE_TTL_SECONDS } from './auth.devices.ts';
import { lifecycleProcedures } from './auth.lifecycle.router.ts';
import { noInput } from '../../lib/validation.ts';
import { setCookieHeader } from '../../rest-meta.ts';
import { rest } from './auth.rest.ts';
import {
  loginInput,
  loginOutput,
  logoutOutput,
  meOutput,
  messageOutput,
  registerInput,
  registerOutput,
  resendVerificationInput,
  verifyEmailInput,
} from './auth.schemas.ts';
import * as auth from './auth.service.ts';

function cookie(ctx: Context, name: string, value: string, maxAgeSeconds: number): string {
  const secure = ctx.deps.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

export const authRouter = router({
  register: publicProcedure
    .meta(rest('POST', 'register', 'Create an account; a confirmation link is e-mailed', {
      successStatus: 201,
      errors: { 400: 'A field is missing or invalid (see issues), or the body is not JSON', 429: 'Too many registrations from this address or IP' },
    }))
    .input(registerInput)
    .output(registerOutput)
    .mutation(async ({ ctx, input }) => {
      const result = await auth.register(ctx.deps, input, ctx.request);
      ctx.response.status = 201;
      return result;
    }),

  verifyEmail: publicProcedure
    .meta(rest('POST', 'verify-email', 'Confirm an e-mail address with the token from the mail', {
      errors: { 400: 'INVALID_TOKEN: unknown, used or expired; or an invalid body' },
    }))
    .input(verifyEmailInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => auth.verifyEmail(ctx.deps, input.token, ctx.request)),

  resendVerification: publicProcedure
    .meta(rest('POST', 'resend-verification', 'Send a new confirmation link (same answer for every address)', {
      errors: { 400: 'The e-mail is missing or invalid, or the body is not JSON', 429: 'Too many requests for this address or IP' },
    }))
    .input(resendVerificationInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => auth.resendVerification(ctx.deps, input.email, ctx.request)),

  login: publicProcedure
    .meta(rest('POST', 'login', 'Log in; returns a session JWT and sets the svc_token cookie', {
      errors: {
        400: 'A field is missing or invalid, or the body is not JSON',
        401: 'INVALID_CREDENTIALS: unknown e-mail or wrong password (the same answer for both)',
        403: 'EMAIL_NOT_VERIFIED: the password matched but the address is not verified yet',
        429: 'Too many attempts for this account or IP',
      },
      responseHeaders: setCookieHeader(
        'svc_token=<jwt>; Path=/; HttpOnly; SameSite=Lax; Max-Age=<JWT_TTL s>, plus Secure over https. A client that has not ' +
          'logged in to this account before also gets svc_device=<signed device id> (one year): sent back on later logins, it ' +
          'keeps the account-wide failed-login cap from locking this client out.',
      ),
    }))
    .input(loginInput)
    .output(loginOutput)
    .mutation(async ({ ctx, input }) => {
      const { token, user, deviceToken } = await auth.login(ctx.deps, input, ctx.request, ctx.credentials);
      ctx.response.headers.push(['set-cookie', cookie(ctx, SESSION_COOKIE, token, ctx.deps.config.jwtTtlSeconds)]);
      if (deviceToken) ctx.response.headers.push(['set-cookie', cookie(ctx, DEVICE_COOKIE, deviceToken, DEVICE_TTL_SECONDS)]);
      return { success: true as const, token, user };
    }),

  me: authedProcedure
    .meta(rest('GET', 'me', 'The calling account (Bearer JWT, Bearer API key or the svc_token cookie)', {
      protect: true,
      errors: { 401: 'No valid JWT, API key or cookie' },
    }))
    .input(z.void())
    .output(meOutput)
    .query(({ ctx }) => ({ success: true as const, user: auth.me(ctx.auth) })),

  logout: authedProcedure
    .meta(rest('POST', 'logout', 'Revoke the current session and clear the cookie', {
      protect: true,
      errors: { 401: 'No valid session JWT or cookie (an API key has no session to end)' },
      responseHeaders: setCookieHeader('svc_token=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0'),
    }))
    .input(noInput)
    .output(logoutOutput)
    .mutation(async ({ ctx }) => {
      await auth.logout(ctx.deps, ctx.auth, ctx.request);
      ctx.response.headers.push(['set-cookie', cookie(ctx, SESSION_COOKIE, '', 0)]);
      return { success: true as const };
    }),

  ...lifecycleProcedures,
});
