import { authedProcedure } from '../access/index.ts';
import { authRoute } from '../../trpc/rest-meta.ts';
import { accessTokenInput, accessTokenOutput } from './tokens.schemas.ts';
import { mintAccessToken } from './tokens.service.ts';

/** Access tokens for the platform's services. Merged into `auth.*` by server/src/router.ts. */
export const tokensProcedures = {
  accessToken: authedProcedure
    .meta(authRoute('POST', 'token', "A short-lived access token for one of the platform's services, which checks it with GET /.well-known/jwks.json", {
      protect: true,
      description: 'How a receiving service checks it, and what its short life means: [docs/ACCESS-TOKENS.md](ACCESS-TOKENS.md).',
      errors: {
        VALIDATION_FAILED: 'the audience is not one of `ACCESS_TOKEN_AUDIENCES` (issue path `audience`)',
        UNAUTHORIZED: 'a revoked or idle session, a rotated key and a deleted account get none',
        NOT_FOUND: 'access tokens are not enabled (`ACCESS_TOKEN_AUDIENCES` is not set)',
      },
    }))
    .input(accessTokenInput)
    .output(accessTokenOutput)
    .mutation(({ ctx, input }) => mintAccessToken(ctx.deps, ctx.auth, input.audience)),
};
