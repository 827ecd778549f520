import { z } from 'zod';
import type { Context } from '../context.ts';
import { successOutput } from '../lib/validation.ts';
import { restRoute } from '../rest-meta.ts';
import { adminProcedure, router } from '../trpc.ts';
import type { AuthContext } from '../modules/auth/auth.types.ts';
import {
  deliveryIdInput,
  deliveryOutput,
  inboxStatsOutput,
  listInboxInput,
  listInboxOutput,
  replayDeliveriesInput,
  replayedOutput,
} from './admin.schemas.ts';
import { inboxStats, listInbox, replayDeliveries, replayDelivery, showDelivery, type Actor } from './admin.service.ts';

const NOT_ADMIN = { 401: 'No valid JWT, API key or cookie', 403: 'FORBIDDEN: the account is not an administrator' };
const actor = (ctx: Context & { auth: AuthContext }): Actor => ({ accountId: ctx.auth.account.id, request: ctx.request });

/** The operator API (docs/API.md, Operator API): the inbox of webhook deliveries, for accounts with role admin. */
export const adminRouter = router({
  inboxStats: adminProcedure
    .meta(restRoute('GET', '/admin/inbox/stats', 'Deliveries per provider and state, and the oldest still waiting', { protect: true, errors: NOT_ADMIN }))
    .input(z.void())
    .output(inboxStatsOutput)
    .query(({ ctx }) => inboxStats(ctx.deps, actor(ctx))),

  listInbox: adminProcedure
    .meta(restRoute('GET', '/admin/inbox', 'Deliveries, newest first, filtered and a page at a time', {
      protect: true,
      errors: { 400: 'A filter is invalid (see issues), or the cursor is not one this list gave out', ...NOT_ADMIN },
    }))
    .input(listInboxInput)
    .output(listInboxOutput)
    .query(({ ctx, input }) => listInbox(ctx.deps, actor(ctx), input)),

  showDelivery: adminProcedure
    .meta(restRoute('GET', '/admin/inbox/{id}', 'One delivery with its payload as received', {
      protect: true,
      errors: { 400: 'The id is invalid', ...NOT_ADMIN, 404: 'NOT_FOUND: no such delivery' },
    }))
    .input(deliveryIdInput)
    .output(deliveryOutput)
    .query(({ ctx, input }) => showDelivery(ctx.deps, actor(ctx), input.id)),

  replayDelivery: adminProcedure
    .meta(restRoute('POST', '/admin/inbox/{id}/replay', 'Apply one delivery again through its handler, exactly once in effect', {
      protect: true,
      errors: { 400: 'The id is invalid', ...NOT_ADMIN, 404: 'NOT_FOUND: no such delivery' },
    }))
    .input(deliveryIdInput)
    .output(successOutput)
    .mutation(({ ctx, input }) => replayDelivery(ctx.deps, actor(ctx), input.id)),

  replayDeliveries: adminProcedure
    .meta(restRoute('POST', '/admin/inbox/replay', 'Apply every dead (or ignored) delivery matching the filter again', {
      protect: true,
      errors: { 400: 'A filter is invalid (see issues)', ...NOT_ADMIN },
    }))
    .input(replayDeliveriesInput.optional())
    .output(replayedOutput)
    .mutation(({ ctx, input }) => replayDeliveries(ctx.deps, actor(ctx), input ?? {})),
});
