import { z } from 'zod';
import { noInput, successOutput } from '../../lib/validation.ts';
import { authedProcedure, publicProcedure } from '../../trpc/procedures.ts';
import { deleteAccount } from './auth.account.ts';
import { listActivity } from './auth.audit.ts';
import { cancelEmailChange, changeEmail, confirmEmailChange, showPendingEmailChange } from './auth.email-change.ts';
import { rotateApiKey } from './auth.keys.ts';
import { changePassword, forgotPassword, resetPassword } from './auth.passwords.ts';
import { rest } from './auth.rest.ts';
import {
  activityOutput,
  changeEmailInput,
  changePasswordInput,
  confirmEmailChangeInput,
  deleteAccountInput,
  forgotPasswordInput,
  messageOutput,
  pendingEmailChangeOutput,
  resetPasswordInput,
  revokeAllSessionsInput,
  revokeAllSessionsOutput,
  rotateApiKeyInput,
  rotateApiKeyOutput,
  sessionIdInput,
  sessionsOutput,
} from './auth.schemas.ts';
import { listSessions, revokeAllSessions, revokeSession } from './auth.sessions.ts';

const NO_CREDENTIALS = 'No valid JWT, API key or cookie';
const WRONG_PASSWORD = 'INVALID_CREDENTIALS: the password is wrong (it counts as a failed login)';
const INVALID_BODY = 'A field is missing or invalid (see issues), or the body is not JSON';

/** The account lifecycle (docs/API.md, Account lifecycle): looking after an account. Merged into `auth.*` (auth.router.ts). */
export const lifecycleProcedures = {
  forgotPassword: publicProcedure
    .meta(rest('POST', 'password/forgot', 'E-mail a link to choose a new password (the same answer for every address)', {
      errors: { 400: INVALID_BODY, 429: 'Too many requests for this address or IP' },
    }))
    .input(forgotPasswordInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => forgotPassword(ctx.deps, input.email, ctx.request)),

  resetPassword: publicProcedure
    .meta(rest('POST', 'password/reset', 'Set a new password with the token from the mail; every session ends', {
      errors: { 400: 'INVALID_TOKEN: unknown, used or expired; or an invalid body', 429: 'Too many tries from this IP' },
    }))
    .input(resetPasswordInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => resetPassword(ctx.deps, input.token, input.password, ctx.request)),

  changePassword: authedProcedure
    .meta(rest('POST', 'password/change', 'Change the password; every other session ends', {
      protect: true,
      errors: { 400: INVALID_BODY, 401: `${NO_CREDENTIALS}, or ${WRONG_PASSWORD}`, 429: 'Too many password checks for this session' },
    }))
    .input(changePasswordInput)
    .output(successOutput)
    .mutation(({ ctx, input }) => changePassword(ctx.deps, ctx.auth, input, ctx.request)),

  rotateApiKey: authedProcedure
    .meta(rest('POST', 'api-key/rotate', 'Replace the API key; the previous one works for grace_seconds more', {
      protect: true,
      errors: { 400: INVALID_BODY, 401: NO_CREDENTIALS },
    }))
    .input(rotateApiKeyInput.optional())
    .output(rotateApiKeyOutput)
    .mutation(({ ctx, input }) => rotateApiKey(ctx.deps, ctx.auth, input ?? {}, ctx.request)),

  listSessions: authedProcedure
    .meta(rest('GET', 'sessions', 'The live sessions, newest first; `current` is the calling JWT\'s', {
      protect: true,
      beforeMfaSetup: true,
      errors: { 401: NO_CREDENTIALS },
    }))
    .input(z.void())
    .output(sessionsOutput)
    .query(({ ctx }) => listSessions(ctx.deps, ctx.auth)),

  revokeSession: authedProcedure
    .meta(rest('DELETE', 'sessions/{id}', 'End one session, at once on every instance', {
      protect: true,
      beforeMfaSetup: true,
      errors: { 400: INVALID_BODY, 401: NO_CREDENTIALS, 404: 'NOT_FOUND: no live session of this account has that id' },
    }))
    .input(sessionIdInput)
    .output(successOutput)
    .mutation(({ ctx, input }) => revokeSession(ctx.deps, ctx.auth, input.id, ctx.request)),

  revokeAllSessions: authedProcedure
    .meta(rest('POST', 'sessions/revoke-all', 'Sign out everywhere (else): every live session, or every other one', {
      protect: true,
      beforeMfaSetup: true,
      errors: { 400: INVALID_BODY, 401: NO_CREDENTIALS },
    }))
    .input(revokeAllSessionsInput.optional())
    .output(revokeAllSessionsOutput)
    .mutation(({ ctx, input }) => revokeAllSessions(ctx.deps, ctx.auth, input?.keep_current ?? true, ctx.request)),

  changeEmail: authedProcedure
    .meta(rest('POST', 'email/change', 'Move the account to another address, once that address confirms', {
      protect: true,
      errors: { 400: INVALID_BODY, 401: `${NO_CREDENTIALS}, or ${WRONG_PASSWORD}`, 429: 'Too many changes or password checks' },
    }))
    .input(changeEmailInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => changeEmail(ctx.deps, ctx.auth, input, ctx.request)),

  pendingEmailChange: authedProcedure
    .meta(rest('GET', 'email/pending', 'The e-mail change waiting for its confirmation link, if any', {
      protect: true,
      errors: { 401: NO_CREDENTIALS },
    }))
    .input(z.void())
    .output(pendingEmailChangeOutput)
    .query(({ ctx }) => showPendingEmailChange(ctx.deps, ctx.auth)),

  cancelEmailChange: authedProcedure
    .meta(rest('POST', 'email/cancel', 'Cancel the pending e-mail change: its link stops working', {
      protect: true,
      errors: { 400: INVALID_BODY, 401: NO_CREDENTIALS },
    }))
    .input(noInput)
    .output(messageOutput)
    .mutation(({ ctx }) => cancelEmailChange(ctx.deps, ctx.auth, ctx.request)),

  confirmEmailChange: publicProcedure
    .meta(rest('POST', 'email/confirm', 'Confirm a new address with the token mailed to it', {
      errors: { 400: 'INVALID_TOKEN: unknown, used or expired, or the address was taken meanwhile; or an invalid body', 429: 'Too many tries from this IP' },
    }))
    .input(confirmEmailChangeInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => confirmEmailChange(ctx.deps, input.token, ctx.request)),

  deleteAccount: authedProcedure
    .meta(rest('POST', 'account/delete', 'Delete the account with its sessions, key, sites, channels and messages', {
      protect: true,
      errors: { 400: INVALID_BODY, 401: `${NO_CREDENTIALS}, or ${WRONG_PASSWORD}`, 429: 'Too many password checks for this session' },
    }))
    .input(deleteAccountInput)
    .output(successOutput)
    .mutation(({ ctx, input }) => deleteAccount(ctx.deps, ctx.auth, input, ctx.request)),

  listActivity: authedProcedure
    .meta(rest('GET', 'activity', 'The account\'s latest 100 events, newest first', {
      protect: true,
      errors: { 401: NO_CREDENTIALS },
    }))
    .input(z.void())
    .output(activityOutput)
    .query(({ ctx }) => listActivity(ctx.deps.db, ctx.auth.account.id)),
};
