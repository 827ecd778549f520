import { z } from 'zod';
import type { Context } from '../trpc/context.ts';
import { successOutput } from '../lib/validation.ts';
import { restRoute } from '../trpc/rest-meta.ts';
import { router } from '../trpc/procedures.ts';
import { adminProcedure } from '../modules/access/index.ts';
import type { AuthContext } from '../modules/sessions/index.ts';
import {
  accountIdInput,
  accountOutput,
  auditExportInput,
  auditExportOutput,
  deliveryIdInput,
  findAccountInput,
  deliveryOutput,
  inboxStatsOutput,
  listInboxInput,
  listInboxOutput,
  replayDeliveriesInput,
  replayedOutput,
  revokedSessionsOutput,
} from './admin.schemas.ts';
import { consoleProcedures } from './admin.console.ts';
import { eventProcedures } from '../modules/events/events.router.ts';
import {
  auditExportPage,
  findAccount,
  inboxStats,
  listInbox,
  replayDeliveries,
  replayDelivery,
  resetAccountMfa,
  revokeAccountSessions,
  showDelivery,
  type Actor,
} from './admin.service.ts';

const NO_SUCH_ACCOUNT = { NOT_FOUND: 'no such account' };
const BAD_CURSOR = 'a filter is invalid or unknown (see `issues`), or the cursor is not one this list gave out';
const actor = (ctx: Context & { auth: AuthContext }): Actor => ({ accountId: ctx.auth.account.id, request: ctx.request });

/** The operator API (docs/API.md, Operator API): the inbox of webhook deliveries, accounts, the console's overview, events out and the activity export, for accounts with role admin. */
export const adminRouter = router({
  inboxStats: adminProcedure
    .meta(restRoute('GET', '/admin/inbox/stats', 'Deliveries per provider and state, and the oldest still waiting', { protect: true }))
    .input(z.void())
    .output(inboxStatsOutput)
    .query(({ ctx }) => inboxStats(ctx.deps, actor(ctx))),

  listInbox: adminProcedure
    .meta(restRoute('GET', '/admin/inbox', 'Deliveries, newest first, filtered and a page at a time', {
      protect: true,
      errors: { VALIDATION_FAILED: BAD_CURSOR },
    }))
    // Every field is optional: a tRPC call may give no input, as a REST request gives no query.
    .input(listInboxInput.prefault({}))
    .output(listInboxOutput)
    .query(({ ctx, input }) => listInbox(ctx.deps, actor(ctx), input)),

  showDelivery: adminProcedure
    .meta(restRoute('GET', '/admin/inbox/{id}', 'One delivery with its payload as received', {
      protect: true,
      errors: { VALIDATION_FAILED: 'the id is not a delivery id', NOT_FOUND: 'no such delivery' },
    }))
    .input(deliveryIdInput)
    .output(deliveryOutput)
    .query(({ ctx, input }) => showDelivery(ctx.deps, actor(ctx), input.id)),

  replayDelivery: adminProcedure
    .meta(restRoute('POST', '/admin/inbox/{id}/replay', 'Apply one delivery again through its handler, exactly once in effect', {
      protect: true,
      errors: { NOT_FOUND: 'no such delivery' },
    }))
    .input(deliveryIdInput)
    .output(successOutput)
    .mutation(({ ctx, input }) => replayDelivery(ctx.deps, actor(ctx), input.id)),

  replayDeliveries: adminProcedure
    .meta(restRoute('POST', '/admin/inbox/replay', 'Apply every dead (or ignored) delivery matching the filter again', {
      protect: true,
    }))
    .input(replayDeliveriesInput.optional())
    .output(replayedOutput)
    .mutation(({ ctx, input }) => replayDeliveries(ctx.deps, actor(ctx), input ?? {})),

  findAccount: adminProcedure
    .meta(restRoute('GET', '/admin/accounts', 'The account with this e-mail address, without its API key, and whether it has a second factor', {
      protect: true,
      errors: { VALIDATION_FAILED: 'the e-mail is missing or not a bare address', NOT_FOUND: 'no account has that e-mail address' },
    }))
    .input(findAccountInput)
    .output(accountOutput)
    .query(({ ctx, input }) => findAccount(ctx.deps, actor(ctx), input.email)),

  revokeSessions: adminProcedure
    .meta(restRoute('POST', '/admin/accounts/{id}/revoke-sessions', 'Sign the account out everywhere and void its pending e-mail-change and reset links; its owner is mailed', {
      protect: true,
      errors: NO_SUCH_ACCOUNT,
    }))
    .input(accountIdInput)
    .output(revokedSessionsOutput)
    .mutation(async ({ ctx, input }) => {
      const { revoked } = await revokeAccountSessions(ctx.deps, actor(ctx), { id: input.id });
      return { success: true as const, revoked };
    }),

  resetMfa: adminProcedure
    .meta(restRoute('POST', '/admin/accounts/{id}/reset-mfa', "Turn off the account's second factor (authenticator, passkeys, recovery codes); its owner is mailed", {
      protect: true,
      errors: NO_SUCH_ACCOUNT,
    }))
    .input(accountIdInput)
    .output(successOutput)
    .mutation(async ({ ctx, input }) => {
      await resetAccountMfa(ctx.deps, actor(ctx), { id: input.id });
      return { success: true as const };
    }),

  ...consoleProcedures,

  ...eventProcedures,

  // No REST meta: GET /api/v1/admin/audit streams NDJSON, which trpc-to-openapi cannot answer
  // with, so the gateway mounts it (gateway/src/routes/audit-export.ts) and calls this
  // procedure page after page. Over tRPC it is a page at a time: the typed client's
  // httpBatchLink cannot take a stream.
  auditExport: adminProcedure
    // Every field is optional: a tRPC call may give no input, as a REST request gives no query.
    .input(auditExportInput.prefault({}))
    .output(auditExportOutput)
    .query(({ ctx, input }) => auditExportPage(ctx.deps, actor(ctx), input)),
});
