import { z } from 'zod';
import { authedProcedure, router } from '../../trpc.ts';
import { channelIdInput, channelListOutput, createChannelInput, createChannelOutput, messageListOutput } from './channels.schemas.ts';
import * as channels from './channels.service.ts';

/** Visitor-bot channels; each is visible only to the account that made it. */
export const channelsRouter = router({
  create: authedProcedure
    .input(createChannelInput)
    .output(createChannelOutput)
    .mutation(({ ctx, input }) => channels.createChannel(ctx.deps, ctx.auth.account.id, input)),

  list: authedProcedure
    .input(z.void())
    .output(channelListOutput)
    .query(({ ctx }) => channels.listChannels(ctx.deps, ctx.auth.account.id)),

  messages: authedProcedure
    .input(channelIdInput)
    .output(messageListOutput)
    .query(({ ctx, input }) => channels.listMessages(ctx.deps, ctx.auth.account.id, input.channelId)),
});
