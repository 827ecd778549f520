import { z } from 'zod';
import { successOutput } from '../../lib/validation.ts';
import { publicProcedure } from '../../trpc/procedures.ts';
import { authedProcedure, passwordConfirmingProcedure } from '../access/index.ts';
import { authRoute } from '../../trpc/rest-meta.ts';
import type { Context } from '../../trpc/context.ts';
import { authenticate, signedIn } from '../sessions/index.ts';
import { finishSignIn, startSignIn, type SignInOutcome } from './identities.flow.ts';
import { identitiesOutput, linkIdentityInput, linkIdentityOutput, oauthProvidersOutput, unlinkIdentityInput } from './identities.schemas.ts';
import { listIdentities, oauthProviders, startLink, unlinkIdentity } from './identities.service.ts';

/** Identity providers: the list, the account's connections, connecting and disconnecting one. Merged into `auth.*` by server/src/router.ts. */
export const identitiesProcedures = {
  oauthProviders: publicProcedure
    .meta(authRoute('GET', 'oauth/providers', 'The identity providers people may sign in with, and where each sign-in starts', {}))
    .input(z.void())
    .output(oauthProvidersOutput)
    .query(({ ctx }) => oauthProviders(ctx.deps)),

  identities: authedProcedure
    .meta(authRoute('GET', 'identities', "The account's connected identity providers, and whether it has a password", {
      protect: true,
    }))
    .input(z.void())
    .output(identitiesOutput)
    .query(({ ctx }) => listIdentities(ctx.deps, ctx.auth)),

  linkIdentity: passwordConfirmingProcedure(linkIdentityInput)
    .meta(authRoute('POST', 'identities/{name}/link', "Start connecting an identity provider: a start URL for this session's browser", {
      protect: true,
      stepUp: true,
      errors: {
        FORBIDDEN: 'called with an API key (connecting is done in a browser)',
        NOT_FOUND: 'no identity provider has that name',
        CONFLICT: 'that provider is already connected to the account',
      },
    }))
    .output(linkIdentityOutput)
    .mutation(({ ctx, input }) => startLink(ctx.deps, ctx.auth, input, ctx.request)),

  unlinkIdentity: passwordConfirmingProcedure(unlinkIdentityInput)
    .meta(authRoute('POST', 'identities/{name}/unlink', 'Disconnect an identity provider from the account', {
      protect: true,
      stepUp: true,
      errors: {
        NOT_FOUND: 'that provider is not connected to the account',
        CONFLICT: 'it is the last way in (no password and no other provider)',
      },
    }))
    .output(successOutput)
    .mutation(({ ctx, input }) => unlinkIdentity(ctx.deps, ctx.auth, input, ctx.request)),
};

type Callback = { provider: string; query: URLSearchParams; sealed: string | undefined };

/**
 * The two halves of a sign-in through a provider, for the gateway's browser routes (they
 * answer with redirects and pages, not procedures' JSON), on a page's procedure context: its
 * credentials are the browser's cookies (the session's must be the one its link ticket names; never
 * a Bearer header, which a browser sent here does not carry), its request the facts the
 * gateway saw once, and a complete sign-in puts the session and device cookies into its
 * response, as a password sign-in does. Exported from here, through server/src/router.ts and
 * the server's face, rather than from the module's face: they reach the second factor, which
 * builds on the passwords module, which asks the face about linked providers.
 */
export const identityFlows = {
  /** GET /oauth/{name}/start: where to send the browser, and the sealed cookie that carries the sign-in back. */
  start(ctx: Context, input: { provider: string; next: string | undefined; intent: 'login' | 'link'; ticket: string | undefined }) {
    return startSignIn(ctx.deps, input);
  },
  /** GET /oauth/{name}/callback: how the provider's answer ended (a sign-in's session handed to the transport, signedIn). */
  async finish(ctx: Context, callback: Callback): Promise<SignInOutcome> {
    const signedInAs = ctx.credentials.cookie === undefined ? undefined : await authenticate(ctx.deps, ctx.credentials);
    const outcome = await finishSignIn(ctx.deps, { ...callback, signedIn: signedInAs }, ctx.request, ctx.credentials);
    if (outcome.kind === 'signed-in') signedIn(ctx, outcome.login);
    return outcome;
  },
};
