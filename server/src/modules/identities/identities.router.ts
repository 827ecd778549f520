import { z } from 'zod';
import { successOutput } from '../../lib/validation.ts';
import { authedProcedure, passwordConfirmingProcedure, publicProcedure } from '../../trpc/procedures.ts';
import { AUTH_ROUTE_ERRORS, authRoute } from '../../trpc/rest-meta.ts';
import type { Context } from '../../trpc/context.ts';
import { authenticate, signedIn } from '../sessions/index.ts';
import { finishSignIn, startSignIn, type SignInOutcome } from './identities.flow.ts';
import { identitiesOutput, linkIdentityInput, linkIdentityOutput, oauthProvidersOutput, unlinkIdentityInput } from './identities.schemas.ts';
import { listIdentities, oauthProviders, startLink, unlinkIdentity } from './identities.service.ts';

const { noCredentials: NO_CREDENTIALS, invalidBody: INVALID_BODY } = AUTH_ROUTE_ERRORS;

/** Identity providers: the list, the account's connections, connecting and disconnecting one. Merged into `auth.*` by server/src/router.ts. */
export const identitiesProcedures = {
  oauthProviders: publicProcedure
    .meta(authRoute('GET', 'oauth/providers', 'The identity providers people may sign in with, and where each sign-in starts', {
      errors: { 400: 'VALIDATION_FAILED: a control character in a header or the query' },
    }))
    .input(z.void())
    .output(oauthProvidersOutput)
    .query(({ ctx }) => oauthProviders(ctx.deps)),

  identities: authedProcedure
    .meta(authRoute('GET', 'identities', "The account's connected identity providers, and whether it has a password", {
      protect: true,
      errors: { 401: NO_CREDENTIALS },
    }))
    .input(z.void())
    .output(identitiesOutput)
    .query(({ ctx }) => listIdentities(ctx.deps, ctx.auth)),

  linkIdentity: passwordConfirmingProcedure(linkIdentityInput)
    .meta(authRoute('POST', 'identities/{name}/link', "Start connecting an identity provider: a start URL for this session's browser", {
      protect: true,
      errors: {
        400: `INVALID_CODE: the step-up proof is wrong; or ${INVALID_BODY}`,
        401: `${NO_CREDENTIALS}, or INVALID_CREDENTIALS: the password is wrong (it counts as a failed login)`,
        403: 'FORBIDDEN: called with an API key (connecting is done in a browser); or STEP_UP_REQUIRED: a second factor is on and this session has not proved it lately; or REAUTH_REQUIRED: the account has no password and this is not a session begun through one of its providers in the last 10 minutes (`reauth_url` starts one)',
        404: 'NOT_FOUND: no identity provider has that name',
        409: 'CONFLICT: that provider is already connected to the account',
      },
    }))
    .output(linkIdentityOutput)
    .mutation(({ ctx, input }) => startLink(ctx.deps, ctx.auth, input, ctx.request)),

  unlinkIdentity: passwordConfirmingProcedure(unlinkIdentityInput)
    .meta(authRoute('POST', 'identities/{name}/unlink', 'Disconnect an identity provider from the account', {
      protect: true,
      errors: {
        400: `INVALID_CODE: the step-up proof is wrong; or ${INVALID_BODY}`,
        401: `${NO_CREDENTIALS}, or INVALID_CREDENTIALS: the password is wrong (it counts as a failed login)`,
        403: 'STEP_UP_REQUIRED: a second factor is on and this session has not proved it lately; or REAUTH_REQUIRED: the account has no password and this is not a session begun through one of its providers in the last 10 minutes (`reauth_url` starts one)',
        404: 'NOT_FOUND: that provider is not connected to the account',
        409: 'CONFLICT: it is the last way in (no password and no other provider)',
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
  /** GET /oauth/{name}/callback: how the provider's answer ended (signedIn's cookies already in the context's response). */
  async finish(ctx: Context, callback: Callback): Promise<SignInOutcome> {
    const signedInAs = ctx.credentials.cookie === undefined ? undefined : await authenticate(ctx.deps, ctx.credentials);
    const outcome = await finishSignIn(ctx.deps, { ...callback, signedIn: signedInAs }, ctx.request, ctx.credentials);
    if (outcome.kind === 'signed-in') signedIn(ctx, outcome.login);
    return outcome;
  },
};
