import { z } from 'zod';
import { noInput, successOutput } from '../../lib/validation.ts';
import { SESSION_COOKIE } from '../../trpc/context.ts';
import { publicProcedure } from '../../trpc/procedures.ts';
import { authedProcedure } from '../access/index.ts';
import { authRoute, setCookieHeader } from '../../trpc/rest-meta.ts';
import { loginMfaInput, loginPasskeyInput, optionsOutput, passkeyLoginOptionsInput, passkeySignInOptions } from '../mfa/index.ts';
import { loginInput, loginOutput, revokeAllSessionsInput, revokeAllSessionsOutput, sessionIdInput, sessionsOutput } from './sessions.schemas.ts';
import { logout, listSessions, revokeAllSessions, revokeSession } from './sessions.service.ts';
import { signedIn, signedOut } from './sessions.issue.ts';
import { login, loginSecondStep, loginWithPasskey } from './sessions.login.ts';

/**
 * The session cookie as the API reference shows it: as the gateway sets it over http
 * (gateway/src/procedure-context.ts), with placeholders; tests/auth.login.rest.test.ts holds
 * the two to each other.
 */
const SESSION_COOKIE_SHOWN = `${SESSION_COOKIE}=<jwt>; Path=/; HttpOnly; SameSite=Lax; Max-Age=<JWT_TTL s>`;
const CLEARED_SESSION_COOKIE_SHOWN = `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`;

/** The sign-in routes' limits (sessions.limits.ts): per client IP, and per address and client. */
const SIGN_IN_LIMITED = 'too many sign-in attempts from this client IP, or for this account from it, or too many failed logins of the account';

/** Signing in and out, and the account's sessions. Merged into `auth.*` by server/src/router.ts. */
export const sessionsProcedures = {
  login: publicProcedure
    .meta(authRoute('POST', 'login', 'Log in; returns a session JWT and sets the svc_token cookie', {
      errors: {
        INVALID_CREDENTIALS: 'unknown e-mail or wrong password (the same answer for both)',
        EMAIL_NOT_VERIFIED: 'the password matched, but the address is not verified yet',
        MFA_REQUIRED: 'the password matched and the account has a second factor: no cookie yet; the body carries `mfa_token` and `methods` for POST /login/mfa',
        RATE_LIMITED: SIGN_IN_LIMITED,
      },
      responseHeaders: setCookieHeader(
        `${SESSION_COOKIE_SHOWN}, plus Secure over https. A client that has not ` +
          'logged in to this account before also gets svc_device=<signed device id> (one year; over https named __Host-svc_device): ' +
          'sent back on later logins, it keeps the account-wide failed-login cap from locking this client out.',
      ),
    }))
    .input(loginInput)
    .output(loginOutput)
    .mutation(async ({ ctx, input }) => signedIn(ctx, await login(ctx.deps, input, ctx.request, ctx.credentials))),

  loginMfa: publicProcedure
    .meta(authRoute('POST', 'login/mfa', 'The second step of a sign-in: the mfa_token with a code or a passkey answer', {
      errors: {
        INVALID_TOKEN: 'the `mfa_token` is unknown, used, expired or spent by 5 wrong codes',
        INVALID_CREDENTIALS: 'the code or passkey answer is wrong or replayed (it counts as a failed login)',
        RATE_LIMITED: SIGN_IN_LIMITED,
      },
      responseHeaders: setCookieHeader('As for login: svc_token, and svc_device for a client new to this account'),
    }))
    .input(loginMfaInput)
    .output(loginOutput)
    .mutation(async ({ ctx, input }) => signedIn(ctx, await loginSecondStep(ctx.deps, input, ctx.request, ctx.credentials))),

  passkeyLoginOptions: publicProcedure
    .meta(authRoute('POST', 'login/passkey/options', 'WebAuthn request options: for a sign-in by passkey, or with mfa_token for a second step', {
      errors: { INVALID_TOKEN: 'the `mfa_token` is unknown, used or expired', RATE_LIMITED: 'too many sign-in attempts from this client IP' },
    }))
    .input(passkeyLoginOptionsInput)
    .output(optionsOutput)
    .mutation(({ ctx, input }) => passkeySignInOptions(ctx.deps, input ?? {}, ctx.request)),

  loginPasskey: publicProcedure
    .meta(authRoute('POST', 'login/passkey', 'Sign in with a passkey alone (user verification required)', {
      errors: { INVALID_CREDENTIALS: 'the passkey answer does not verify', RATE_LIMITED: 'too many sign-in attempts from this client IP, or for the passkey\'s account from it' },
      responseHeaders: setCookieHeader('As for login: svc_token, and svc_device for a client new to this account'),
    }))
    .input(loginPasskeyInput)
    .output(loginOutput)
    .mutation(async ({ ctx, input }) => signedIn(ctx, await loginWithPasskey(ctx.deps, input, ctx.request, ctx.credentials))),

  logout: authedProcedure
    .meta(authRoute('POST', 'logout', 'Revoke the current session and clear the cookie', {
      protect: true,
      beforeMfaSetup: true,
      errors: { UNAUTHORIZED: 'called with an API key: it has no session to end' },
      responseHeaders: setCookieHeader(CLEARED_SESSION_COOKIE_SHOWN),
    }))
    .input(noInput)
    .output(successOutput)
    .mutation(async ({ ctx }) => {
      await logout(ctx.deps, ctx.auth, ctx.request);
      return signedOut(ctx);
    }),

  listSessions: authedProcedure
    .meta(authRoute('GET', 'sessions', 'The live sessions, newest first; `current` is the calling JWT\'s', {
      protect: true,
      beforeMfaSetup: true,
    }))
    .input(z.void())
    .output(sessionsOutput)
    .query(({ ctx }) => listSessions(ctx.deps, ctx.auth)),

  revokeSession: authedProcedure
    .meta(authRoute('DELETE', 'sessions/{id}', 'End one session, at once on every instance', {
      protect: true,
      beforeMfaSetup: true,
      errors: { NOT_FOUND: 'no live session of this account has that id' },
    }))
    .input(sessionIdInput)
    .output(successOutput)
    .mutation(({ ctx, input }) => revokeSession(ctx.deps, ctx.auth, input.id, ctx.request)),

  revokeAllSessions: authedProcedure
    .meta(authRoute('POST', 'sessions/revoke-all', 'Sign out everywhere (else): every live session, or every other one', {
      protect: true,
      beforeMfaSetup: true,
    }))
    .input(revokeAllSessionsInput.optional())
    .output(revokeAllSessionsOutput)
    .mutation(({ ctx, input }) => revokeAllSessions(ctx.deps, ctx.auth, input?.keep_current ?? true, ctx.request)),
};
