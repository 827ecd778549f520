import type { OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';
import type { Context } from '../../context.ts';
import { SESSION_COOKIE } from '../../context.ts';
import { authedProcedure, publicProcedure, router } from '../../trpc.ts';
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

const rest = (method: 'GET' | 'POST', path: string, summary: string, protect = false): OpenApiMeta => ({
  openapi: { method, path: `/auth/${path}`, tags: ['auth'], summary, protect },
});

function sessionCookie(ctx: Context, token: string, maxAgeSeconds: number): string {
  const secure = ctx.deps.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

export const authRouter = router({
  register: publicProcedure
    .meta(rest('POST', 'register', 'Create an account; a confirmation link is e-mailed'))
    .input(registerInput)
    .output(registerOutput)
    .mutation(async ({ ctx, input }) => {
      const result = await auth.register(ctx.deps, input, ctx.request.ip);
      ctx.response.status = 201;
      return result;
    }),

  verifyEmail: publicProcedure
    .meta(rest('POST', 'verify-email', 'Confirm an e-mail address with the token from the mail'))
    .input(verifyEmailInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => auth.verifyEmail(ctx.deps, input.token)),

  resendVerification: publicProcedure
    .meta(rest('POST', 'resend-verification', 'Send a new confirmation link (same answer for every address)'))
    .input(resendVerificationInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => auth.resendVerification(ctx.deps, input.email, ctx.request.ip)),

  login: publicProcedure
    .meta(rest('POST', 'login', 'Log in; returns a session JWT and sets the svc_token cookie'))
    .input(loginInput)
    .output(loginOutput)
    .mutation(async ({ ctx, input }) => {
      const { token, user } = await auth.login(ctx.deps, input, ctx.request.ip);
      ctx.response.headers.push(['set-cookie', sessionCookie(ctx, token, ctx.deps.config.jwtTtlSeconds)]);
      return { success: true as const, token, user };
    }),

  me: authedProcedure
    .meta(rest('GET', 'me', 'The calling account (Bearer JWT, Bearer API key or the svc_token cookie)', true))
    .input(z.void())
    .output(meOutput)
    .query(({ ctx }) => ({ success: true as const, user: auth.me(ctx.auth) })),

  logout: authedProcedure
    .meta(rest('POST', 'logout', 'Revoke the current session and clear the cookie', true))
    .input(z.void())
    .output(logoutOutput)
    .mutation(async ({ ctx }) => {
      await auth.logout(ctx.deps, ctx.auth);
      ctx.response.headers.push(['set-cookie', sessionCookie(ctx, '', 0)]);
      return { success: true as const };
    }),
});
