import { z } from 'zod';
import { deviceCookieName, SESSION_COOKIE, type Context } from '../../trpc/context.ts';
import { authedProcedure, publicProcedure, router } from '../../trpc/procedures.ts';
import { DEVICE_TTL_SECONDS } from './auth.devices.ts';
import { lifecycleProcedures } from './auth.lifecycle.router.ts';
import { noInput } from '../../lib/validation.ts';
import { setCookieHeader } from '../../trpc/rest-meta.ts';
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
import { passkeySignInOptions } from '../mfa/index.ts';
import { mfaProcedures } from '../mfa/mfa.router.ts';
import { loginMfaInput, loginPasskeyInput, optionsOutput, passkeyLoginOptionsInput } from '../mfa/mfa.schemas.ts';

function cookie(ctx: Context, name: string, value: string, maxAgeSeconds: number): string {
  const secure = ctx.deps.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

/** A complete sign-in: the session cookie, a device cookie for a client new to the account, and the login answer. */
function signedIn(ctx: Context, { token, user, deviceToken }: auth.LoginResult) {
  ctx.response.headers.push(['set-cookie', cookie(ctx, SESSION_COOKIE, token, ctx.deps.config.jwtTtlSeconds)]);
  if (deviceToken) ctx.response.headers.push(['set-cookie', cookie(ctx, deviceCookieName(ctx.deps.config.publicUrl), deviceToken, DEVICE_TTL_SECONDS)]);
  return { success: true as const, token, user };
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
        403: 'EMAIL_NOT_VERIFIED: the password matched but the address is not verified yet; or MFA_REQUIRED: the password matched and the account has a second factor: no cookie yet, the body carries `mfa_token` and `methods` for POST /login/mfa',
        429: 'Too many attempts for this account or IP',
      },
      responseHeaders: setCookieHeader(
        'svc_token=<jwt>; Path=/; HttpOnly; SameSite=Lax; Max-Age=<JWT_TTL s>, plus Secure over https. A client that has not ' +
          'logged in to this account before also gets svc_device=<signed device id> (one year; over https named __Host-svc_device): ' +
          'sent back on later logins, it keeps the account-wide failed-login cap from locking this client out.',
      ),
    }))
    .input(loginInput)
    .output(loginOutput)
    .mutation(async ({ ctx, input }) => signedIn(ctx, await auth.login(ctx.deps, input, ctx.request, ctx.credentials))),

  loginMfa: publicProcedure
    .meta(rest('POST', 'login/mfa', 'The second step of a sign-in: the mfa_token with a code or a passkey answer', {
      errors: {
        400: 'INVALID_TOKEN: the mfa_token is unknown, used, expired or spent by 5 wrong codes; or an invalid body',
        401: 'INVALID_CREDENTIALS: the code or passkey answer is wrong or replayed (it counts as a failed login)',
        429: 'Too many attempts for this account or IP',
      },
      responseHeaders: setCookieHeader('As for login: svc_token, and svc_device for a client new to this account'),
    }))
    .input(loginMfaInput)
    .output(loginOutput)
    .mutation(async ({ ctx, input }) => signedIn(ctx, await auth.loginSecondStep(ctx.deps, input, ctx.request, ctx.credentials))),

  passkeyLoginOptions: publicProcedure
    .meta(rest('POST', 'login/passkey/options', 'WebAuthn request options: for a sign-in by passkey, or with mfa_token for a second step', {
      errors: { 400: 'INVALID_TOKEN: the mfa_token is unknown, used or expired; or an invalid body' },
    }))
    .input(passkeyLoginOptionsInput)
    .output(optionsOutput)
    .mutation(({ ctx, input }) => passkeySignInOptions(ctx.deps, input ?? {})),

  loginPasskey: publicProcedure
    .meta(rest('POST', 'login/passkey', 'Sign in with a passkey alone (user verification required)', {
      errors: { 400: 'A field is missing or invalid', 401: 'INVALID_CREDENTIALS: the passkey answer does not verify', 429: 'Too many attempts from this IP' },
      responseHeaders: setCookieHeader('As for login: svc_token, and svc_device for a client new to this account'),
    }))
    .input(loginPasskeyInput)
    .output(loginOutput)
    .mutation(async ({ ctx, input }) => signedIn(ctx, await auth.loginWithPasskey(ctx.deps, input, ctx.request, ctx.credentials))),

  me: authedProcedure
    .meta(rest('GET', 'me', 'The calling account (Bearer JWT, Bearer API key or the svc_token cookie)', {
      protect: true,
      beforeMfaSetup: true,
      errors: { 401: 'No valid JWT, API key or cookie' },
    }))
    .input(z.void())
    .output(meOutput)
    .query(({ ctx }) => ({ success: true as const, user: auth.me(ctx.auth) })),

  logout: authedProcedure
    .meta(rest('POST', 'logout', 'Revoke the current session and clear the cookie', {
      protect: true,
      beforeMfaSetup: true,
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
  ...mfaProcedures,
});
