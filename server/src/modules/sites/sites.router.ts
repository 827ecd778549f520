import { z } from 'zod';
import { router } from '../../trpc/procedures.ts';
import { authedProcedure } from '../access/index.ts';
import { successOutput } from '../../lib/validation.ts';
import {
  createSiteInput,
  createSiteOutput,
  paymentListOutput,
  siteKeyInput,
  siteListOutput,
  updateSiteInput,
  updateSiteOutput,
} from './sites.schemas.ts';
import * as sites from './sites.service.ts';

/** Sites receive payment-provider webhooks; each is visible only to the account that made it. */
export const sitesRouter = router({
  create: authedProcedure
    .input(createSiteInput)
    .output(createSiteOutput)
    .mutation(({ ctx, input }) => sites.createSite(ctx.deps, ctx.auth.account.id, input, ctx.request)),

  list: authedProcedure
    .input(z.void())
    .output(siteListOutput)
    .query(({ ctx }) => sites.listSites(ctx.deps, ctx.auth.account.id)),

  update: authedProcedure
    .input(updateSiteInput)
    .output(updateSiteOutput)
    .mutation(({ ctx, input }) => sites.updateSite(ctx.deps, ctx.auth.account.id, input, ctx.request)),

  delete: authedProcedure
    .input(siteKeyInput)
    .output(successOutput)
    .mutation(({ ctx, input }) => sites.deleteSite(ctx.deps, ctx.auth.account.id, input.siteKey, ctx.request)),

  payments: authedProcedure
    .input(siteKeyInput)
    .output(paymentListOutput)
    .query(({ ctx, input }) => sites.listPayments(ctx.deps, ctx.auth.account.id, input.siteKey)),
});
