import * as oidc from 'openid-client';
import type { OAuthProviderConfig } from '../../config.oauth.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { safeEqual } from '../../lib/crypto.ts';
import { rateLimitSubject } from '../../lib/rate-limiter.ts';
import type { Credentials, RequestInfo } from '../../lib/request.ts';
import { refuseUntilMfaSetUp, startSecondStep } from '../mfa/index.ts';
import { deviceOf, perAccountClient, SESSION_RATE_RULES, startSession, type AuthContext, type LoginResult } from '../sessions/index.ts';
import { accountForSignIn, addressOf, linkToSignedIn, type Refusal } from './identities.accounts.ts';
import { linkAfterSecondStep } from './identities.link.ts';
import { failureReason, isCancellation, personOf } from './identities.profile.ts';
import { callbackUrl, providerNamed } from './identities.providers.ts';
import { openPending, sealPending, type PendingSignIn } from './identities.state.ts';
import { useTicket } from './identities.tickets.ts';

const SCOPES = { oidc: 'openid email profile', github: 'read:user user:email' } as const;

const LINK_GONE = 'This link to connect a provider was used, has expired, or belongs to another sign-in: connect the provider again from your account page.';

/** The provider's client; 503 while it cannot be reached (its discovery is tried again at the next use). */
async function clientOf(deps: Deps, provider: OAuthProviderConfig): Promise<oidc.Configuration> {
  try {
    return await deps.oauthClients.configuration(provider.name);
  } catch {
    throw new AppError('SERVICE_UNAVAILABLE', `${provider.label} cannot be reached just now; try again in a moment.`);
  }
}

/**
 * GET /oauth/{name}/start: where to send the browser (the provider's authorization URL, with
 * a fresh state, nonce and PKCE challenge), and the sealed cookie that carries them back.
 * `intent=link` needs a live link ticket (identities.tickets.ts), used up here: it names the
 * account the provider will be connected to and the session that must finish it. Without
 * one, 400 INVALID_TOKEN: a link made a plain GET would let any page connect a provider of
 * its choosing to a signed-in visitor's account.
 */
export async function startSignIn(deps: Deps, input: { provider: string; next: string | undefined; intent: 'login' | 'link'; ticket: string | undefined }) {
  const provider = providerNamed(deps.config, input.provider);
  // Before the ticket is used: a provider that cannot be reached just now leaves it for a retry.
  const configuration = await clientOf(deps, provider);
  const ticket = input.intent === 'link' ? await useTicket(deps, input.ticket, provider.name) : undefined;
  if (input.intent === 'link' && !ticket) throw new AppError('INVALID_TOKEN', LINK_GONE);
  const pending: PendingSignIn = {
    provider: provider.name,
    state: oidc.randomState(),
    nonce: oidc.randomNonce(),
    verifier: oidc.randomPKCECodeVerifier(),
    next: input.next,
    intent: input.intent,
    accountId: ticket?.accountId,
    sessionId: ticket?.sessionId,
    startedAt: deps.clock.now().getTime(),
  };
  const parameters: Record<string, string> = {
    redirect_uri: callbackUrl(deps.config, provider.name),
    scope: SCOPES[provider.kind],
    state: pending.state,
    code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: 'S256',
  };
  if (provider.kind === 'oidc') parameters.nonce = pending.nonce;
  return { url: oidc.buildAuthorizationUrl(configuration, parameters).href, cookie: sealPending(deps.secretBox, pending) };
}

/** How a callback ended, for the gateway to answer with a redirect. */
export type SignInOutcome = { next: string | undefined; provider: string } & (
  | { kind: 'signed-in'; login: LoginResult }
  | { kind: 'second-step'; mfaToken: string; methods: string[] }
  | { kind: 'linked' }
  | { kind: 'refused'; reason: Refusal | 'CANCELLED' | 'PROVIDER_FAILED' | 'RATE_LIMITED' }
);

type Callback = { provider: string; query: URLSearchParams; sealed: string | undefined; signedIn: AuthContext | undefined };

/**
 * The pending sign-in this callback answers: its cookie opens, is the provider's and under 10
 * minutes old, and the state the provider sent back is the one it holds. Anything else is 400
 * INVALID_TOKEN and nothing happens: a callback that was not started here is never used.
 */
function pendingFor(deps: Deps, callback: Callback): PendingSignIn {
  const pending = openPending(deps.secretBox, callback.sealed, deps.clock.now());
  const state = callback.query.get('state');
  if (!pending || pending.provider !== callback.provider || !state || !safeEqual(state, pending.state)) {
    throw new AppError('INVALID_TOKEN', 'This sign-in was not started here, or took longer than 10 minutes: start it again.');
  }
  return pending;
}

/**
 * For a link, the caller when it is the session its ticket named (the browser came back with
 * that session's cookie); 400 INVALID_TOKEN for anyone else, before the provider is asked
 * anything. Undefined for a sign-in.
 */
function linkingSession(pending: PendingSignIn, signedIn: AuthContext | undefined): AuthContext | undefined {
  if (pending.intent !== 'link') return undefined;
  if (signedIn?.sessionId === undefined || signedIn.sessionId !== pending.sessionId || signedIn.account.id !== pending.accountId) throw new AppError('INVALID_TOKEN', LINK_GONE);
  return signedIn;
}

/** GET /oauth/{name}/callback: the provider's answer becomes a session, a second step, a link, or a refusal. */
export async function finishSignIn(deps: Deps, callback: Callback, request: RequestInfo, credentials: Credentials): Promise<SignInOutcome> {
  const provider = providerNamed(deps.config, callback.provider);
  const pending = pendingFor(deps, callback);
  const linker = linkingSession(pending, callback.signedIn);
  const ended = { next: pending.next, provider: provider.name };
  if (callback.query.has('error')) return { ...ended, kind: 'refused', reason: isCancellation(callback.query) ? 'CANCELLED' : 'PROVIDER_FAILED' };
  const client = rateLimitSubject(request.ip);
  if (!(await deps.rateLimiter.hit([{ rule: SESSION_RATE_RULES.loginPerIp, key: client }])).allowed) return { ...ended, kind: 'refused', reason: 'RATE_LIMITED' };
  const configuration = await clientOf(deps, provider);
  const url = new URL(`${callbackUrl(deps.config, provider.name)}?${callback.query}`);
  let person;
  try {
    person = await personOf(provider, configuration, url, pending);
  } catch (error) {
    deps.logger.warn({ provider: provider.name, reason: failureReason(error) }, 'identity provider sign-in failed');
    return { ...ended, kind: 'refused', reason: 'PROVIDER_FAILED' };
  }
  const context = { deps, provider, person, request };
  if (linker) {
    // Checked again: the role or the factors may have changed since the link was asked for.
    await refuseUntilMfaSetUp(deps, linker.account);
    const choice = await linkToSignedIn(context, linker.account.id);
    return 'refused' in choice ? { ...ended, kind: 'refused', reason: choice.refused } : { ...ended, kind: 'linked' };
  }
  // A sign-in counts as a password's does, under the address the provider asserts: one
  // client cannot run an address to its account-wide cap through a provider that names it.
  const attempt = perAccountClient(addressOf(person) ?? `${provider.name}:${person.subject}`, request.ip);
  if (!(await deps.rateLimiter.hit([attempt])).allowed) return { ...ended, kind: 'refused', reason: 'RATE_LIMITED' };
  const choice = await accountForSignIn(context);
  if ('refused' in choice) {
    // A refused callback counts like a failed login of the address it named.
    if (choice.email) await deps.rateLimiter.hit([{ rule: SESSION_RATE_RULES.failedLoginsPerAccount, key: choice.email }]);
    return { ...ended, kind: 'refused', reason: choice.refused };
  }
  const secondStep = await startSecondStep(deps, choice.account.id, request, { via: provider.name, pendingLink: choice.pendingLink, attemptKey: attempt.key });
  if (secondStep) return { ...ended, kind: 'second-step', mfaToken: secondStep.mfa_token, methods: secondStep.methods };
  // The account's last factor went since the callback looked: nothing to wait for.
  if (choice.pendingLink) await linkAfterSecondStep(deps, choice.account, choice.pendingLink, request);
  const login = await startSession(deps, choice.account, request, deviceOf(deps, credentials, choice.account.id), provider.name);
  // Ended in a session: given back, as a password sign-in's attempt is.
  await deps.rateLimiter.refund(attempt);
  return { ...ended, kind: 'signed-in', login };
}
