import { z } from 'zod';
import { noInput } from '../../lib/validation.ts';
import { router } from '../../trpc/procedures.ts';
import { authedProcedure } from '../access/index.ts';
import { linkCodeOutput, notificationStatusOutput } from './notifications.schemas.ts';
import * as notifications from './notifications.service.ts';

/** Linking Telegram chats to the account through the operator bot. */
export const notificationsRouter = router({
  createLinkCode: authedProcedure
    .input(noInput)
    .output(linkCodeOutput)
    .mutation(({ ctx }) => notifications.createLinkCode(ctx.deps, ctx.auth.account.id)),

  status: authedProcedure
    .input(z.void())
    .output(notificationStatusOutput)
    .query(({ ctx }) => notifications.notificationStatus(ctx.deps, ctx.auth.account.id)),
});
