import { z } from 'zod';
import type { Context } from '../trpc/context.ts';
import { successOutput } from '../lib/validation.ts';
import { restRoute } from '../trpc/rest-meta.ts';
import { adminProcedure } from '../modules/access/index.ts';
import type { AuthContext } from '../modules/sessions/index.ts';
import type { Actor } from '../lib/request.ts';
import { accountDetails, resendVerificationMail, searchAccounts, setRole } from './admin.accounts.service.ts';
import { overview } from './admin.overview.service.ts';
import {
  accountDetailsOutput,
  accountIdInput,
  overviewOutput,
  searchAccountsInput,
  searchAccountsOutput,
  setRoleInput,
  setRoleOutput,
} from './admin.schemas.ts';

const NO_ACCOUNT = { VALIDATION_FAILED: 'the id is not an account id', NOT_FOUND: 'no such account' };
const actor = (ctx: Context & { auth: AuthContext }): Actor => ({ accountId: ctx.auth.account.id, request: ctx.request });

/**
 * What the operator's console (the /admin pages) calls, like any other client: the overview,
 * and accounts searched, shown and changed. Merged into admin.*; `searchAccounts` stands
 * before `account`, so that /admin/accounts/search is not read as an account id.
 */
export const consoleProcedures = {
  overview: adminProcedure
    .meta(restRoute('GET', '/admin/overview', 'Accounts, sign-ins per hour over 24 hours, the inbox, event endpoints and the latest admin changes, at a glance', {
      protect: true,
    }))
    .input(z.void())
    .output(overviewOutput)
    .query(({ ctx }) => overview(ctx.deps, actor(ctx))),

  searchAccounts: adminProcedure
    .meta(restRoute('GET', '/admin/accounts/search', 'Accounts by the start of their address or by id, newest first, a page at a time', {
      protect: true,
      errors: { VALIDATION_FAILED: '`q`, `cursor` or `limit` is invalid (see issues)' },
    }))
    // Every field is optional: a tRPC call may give no input, as a REST request gives no query.
    .input(searchAccountsInput.prefault({}))
    .output(searchAccountsOutput)
    .query(({ ctx, input }) => searchAccounts(ctx.deps, actor(ctx), input)),

  account: adminProcedure
    .meta(restRoute('GET', '/admin/accounts/{id}', 'The account without its API key, with its identities, live sessions and latest activity', {
      protect: true,
      errors: NO_ACCOUNT,
    }))
    .input(accountIdInput)
    .output(accountDetailsOutput)
    .query(({ ctx, input }) => accountDetails(ctx.deps, actor(ctx), { id: input.id })),

  setRole: adminProcedure
    .meta(restRoute('POST', '/admin/accounts/{id}/role', 'Make the account an admin or a user; the last admin is never made a user', {
      protect: true,
      errors: { ...NO_ACCOUNT, CONFLICT: 'the account is the last admin' },
    }))
    .input(setRoleInput)
    .output(setRoleOutput)
    .mutation(({ ctx, input }) => setRole(ctx.deps, actor(ctx), { id: input.id }, input.role)),

  resendVerification: adminProcedure
    .meta(restRoute('POST', '/admin/accounts/{id}/resend-verification', "Mail the account a new link to confirm its address, as its owner's resend would", {
      protect: true,
      errors: { ...NO_ACCOUNT, CONFLICT: 'the address is confirmed already' },
    }))
    .input(accountIdInput)
    .output(successOutput)
    .mutation(({ ctx, input }) => resendVerificationMail(ctx.deps, actor(ctx), { id: input.id })),
};
