import { z } from 'zod';
import type { Context } from '../../context.ts';
import { SESSION_COOKIE } from '../../context.ts';
import { authedProcedure, publicProcedure, router, type ProcedureMeta } from '../../trpc.ts';
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

type RestRoute = {
  /** The error statuses this route answers with (contract section 2), for the OpenAPI document. */
  errors: Record<number, string>;
  protect?: boolean;
  successStatus?: number;
  responseHeaders?: z.ZodObject;
};

// Statuses the gateway adds to a route's own: a refused body (POST routes) and a database away (all).
const BODY_ERRORS: Record<number, string> = { 413: 'The body is over 16 KiB', 415: 'The body is not application/json' };
const UNAVAILABLE = { 503: 'The database cannot be reached; try again after Retry-After' };

const rest = (method: 'GET' | 'POST', path: string, summary: string, route: RestRoute): ProcedureMeta => ({
  successStatus: route.successStatus,
  openapi: {
    method,
    path: `/auth/${path}`,
    tags: ['auth'],
    summary,
    protect: route.protect ?? false,
    errorResponses: { ...(method === 'POST' && BODY_ERRORS), ...route.errors, ...UNAVAILABLE },
    responseHeaders: route.responseHeaders,
  },
});

const setCookieHeader = (description: string) => z.object({ 'Set-Cookie': z.string().describe(description) });

function sessionCookie(ctx: Context, token: string, maxAgeSeconds: number): string {
  const secure = ctx.deps.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
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
      const result = await auth.register(ctx.deps, input, ctx.request.ip);
      ctx.response.status = 201;
      return result;
    }),

  verifyEmail: publicProcedure
    .meta(rest('POST', 'verify-email', 'Confirm an e-mail address with the token from the mail', {
      errors: { 400: 'INVALID_TOKEN: unknown, used or expired; or an invalid body' },
    }))
    .input(verifyEmailInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => auth.verifyEmail(ctx.deps, input.token)),

  resendVerification: publicProcedure
    .meta(rest('POST', 'resend-verification', 'Send a new confirmation link (same answer for every address)', {
      errors: { 400: 'The e-mail is missing or invalid, or the body is not JSON', 429: 'Too many requests for this address or IP' },
    }))
    .input(resendVerificationInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => auth.resendVerification(ctx.deps, input.email, ctx.request.ip)),

  login: publicProcedure
    .meta(rest('POST', 'login', 'Log in; returns a session JWT and sets the svc_token cookie', {
      errors: {
        400: 'A field is missing or invalid, or the body is not JSON',
        401: 'INVALID_CREDENTIALS: unknown e-mail or wrong password (the same answer for both)',
        403: 'EMAIL_NOT_VERIFIED: the password matched but the address is not verified yet',
        429: 'Too many attempts for this account or IP',
      },
      responseHeaders: setCookieHeader('svc_token=<jwt>; Path=/; HttpOnly; SameSite=Lax; Max-Age=<JWT_TTL s>, plus Secure over https'),
    }))
    .input(loginInput)
    .output(loginOutput)
    .mutation(async ({ ctx, input }) => {
      const { token, user } = await auth.login(ctx.deps, input, ctx.request.ip);
      ctx.response.headers.push(['set-cookie', sessionCookie(ctx, token, ctx.deps.config.jwtTtlSeconds)]);
      return { success: true as const, token, user };
    }),

  me: authedProcedure
    .meta(rest('GET', 'me', 'The calling account (Bearer JWT, Bearer API key or the svc_token cookie)', {
      protect: true,
      errors: { 401: 'No valid JWT, API key or cookie' },
    }))
    .output(meOutput)
    .query(({ ctx }) => ({ success: true as const, user: auth.me(ctx.auth) })),

  logout: authedProcedure
    .meta(rest('POST', 'logout', 'Revoke the current session and clear the cookie', {
      protect: true,
      errors: { 401: 'No valid session JWT or cookie (an API key has no session to end)' },
      responseHeaders: setCookieHeader('svc_token=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0'),
    }))
    .input(z.void())
    .output(logoutOutput)
    .mutation(async ({ ctx }) => {
      await auth.logout(ctx.deps, ctx.auth);
      ctx.response.headers.push(['set-cookie', sessionCookie(ctx, '', 0)]);
      return { success: true as const };
    }),
});
