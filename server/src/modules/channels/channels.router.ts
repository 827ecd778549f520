import { z } from 'zod';
import { router } from '../../trpc/procedures.ts';
import { authedProcedure } from '../access/index.ts';
import { successOutput } from '../../lib/validation.ts';
import {
  channelIdInput,
  channelListOutput,
  createChannelInput,
  createChannelOutput,
  messageListOutput,
  updateChannelInput,
  updateChannelOutput,
} from './channels.schemas.ts';
import * as channels from './channels.service.ts';

/** Visitor-bot channels; each is visible only to the account that made it. */
export const channelsRouter = router({
  create: authedProcedure
    .input(createChannelInput)
    .output(createChannelOutput)
    .mutation(({ ctx, input }) => channels.createChannel(ctx.deps, ctx.auth.account.id, input, ctx.request)),

  list: authedProcedure
    .input(z.void())
    .output(channelListOutput)
    .query(({ ctx }) => channels.listChannels(ctx.deps, ctx.auth.account.id)),

  update: authedProcedure
    .input(updateChannelInput)
    .output(updateChannelOutput)
    .mutation(({ ctx, input }) => channels.updateChannel(ctx.deps, ctx.auth.account.id, input, ctx.request)),

  delete: authedProcedure
    .input(channelIdInput)
    .output(successOutput)
    .mutation(({ ctx, input }) => channels.deleteChannel(ctx.deps, ctx.auth.account.id, input.channelId, ctx.request)),

  messages: authedProcedure
    .input(channelIdInput)
    .output(messageListOutput)
    .query(({ ctx, input }) => channels.listMessages(ctx.deps, ctx.auth.account.id, input.channelId)),
});
