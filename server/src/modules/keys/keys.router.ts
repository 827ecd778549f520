import { authedProcedure } from '../access/index.ts';
import { authRoute } from '../../trpc/rest-meta.ts';
import { rotateApiKeyInput, rotateApiKeyOutput } from './keys.schemas.ts';
import { rotateApiKey } from './keys.service.ts';

/** The account's API key. Merged into `auth.*` by server/src/router.ts. */
export const keysProcedures = {
  rotateApiKey: authedProcedure
    .meta(authRoute('POST', 'api-key/rotate', 'Replace the API key; the previous one works for grace_seconds more', {
      protect: true,
      stepUp: true,
      errors: { FORBIDDEN: 'called with the previous API key, still in its grace period' },
    }))
    .input(rotateApiKeyInput.optional())
    .output(rotateApiKeyOutput)
    .mutation(({ ctx, input }) => rotateApiKey(ctx.deps, ctx.auth, input ?? {}, ctx.request)),
};
