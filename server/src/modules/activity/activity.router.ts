import { z } from 'zod';
import { authedProcedure } from '../access/index.ts';
import { authRoute } from '../../trpc/rest-meta.ts';
import { activityOutput } from './activity.schemas.ts';
import { listActivity } from './activity.service.ts';

/** The account's activity log; merged into `auth.*` by server/src/router.ts. */
export const activityProcedures = {
  listActivity: authedProcedure
    .meta(authRoute('GET', 'activity', 'The account\'s latest 100 events, newest first', {
      protect: true,
    }))
    .input(z.void())
    .output(activityOutput)
    .query(({ ctx }) => listActivity(ctx.deps.db, ctx.auth.account.id)),
};
