import * as oidc from 'openid-client';
import type { OAuthProviderConfig } from '../../config.oauth.ts';
import { NAME_MAX_LENGTH } from '../../lib/validation.ts';
import type { PendingSignIn } from './identities.state.ts';

/** Who the provider says signed in: its stable id for them, and the address it vouches for, if it does. */
export type ProviderPerson = { subject: string; email: string | undefined; emailVerified: boolean; name: string | undefined };

const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : undefined);


/**
 * A provider's name claim as an account's name, which has the rules of a name typed into
 * the service: no control character (a NUL could not even be stored), nor half a surrogate
 * pair; runs of them and of spaces become one space; at most 100 characters, cut between
 * characters. Nothing left: undefined, and the address's local part stands in.
 */
export function nameOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const cleaned = value
    .normalize('NFC')
    .replace(/[\p{Cc}\p{Cs}\s]+/gu, ' ')
    .trim();
  const name = Array.from(cleaned).slice(0, NAME_MAX_LENGTH).join('').trim();
  return name || undefined;
}

/**
 * OpenID Connect: the code for tokens with the PKCE verifier; the library checks the ID
 * token (signature by the issuer's keys, iss, aud, exp, nonce). The address and whether it
 * is verified come from the ID token, or both from userinfo when the ID token does not say.
 */
async function oidcPerson(configuration: oidc.Configuration, callbackUrl: URL, pending: PendingSignIn): Promise<ProviderPerson> {
  const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
    pkceCodeVerifier: pending.verifier,
    expectedState: pending.state,
    expectedNonce: pending.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims()!;
  let source: Record<string, unknown> = claims;
  if (text(claims.email) === undefined || typeof claims.email_verified !== 'boolean') {
    source = await oidc.fetchUserInfo(configuration, tokens.access_token, claims.sub);
  }
  return { subject: claims.sub, email: text(source.email), emailVerified: source.email_verified === true, name: nameOf(claims.name) ?? nameOf(source.name) };
}

type GithubEmail = { email?: unknown; primary?: unknown; verified?: unknown };

async function githubJson(configuration: oidc.Configuration, accessToken: string, url: string): Promise<unknown> {
  const headers = new Headers({ accept: 'application/vnd.github+json', 'user-agent': 'Gatehouse' });
  const response = await oidc.fetchProtectedResource(configuration, accessToken, new URL(url), 'GET', undefined, headers);
  if (!response.ok) throw new Error(`GitHub answered ${response.status} to GET ${new URL(url).pathname}`);
  return response.json();
}

/** GitHub (OAuth 2, no ID token): the person from GET /user, the address from the primary, verified one of GET /user/emails. */
async function githubPerson(configuration: oidc.Configuration, apiUrl: string, callbackUrl: URL, pending: PendingSignIn): Promise<ProviderPerson> {
  const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, { pkceCodeVerifier: pending.verifier, expectedState: pending.state });
  const user = (await githubJson(configuration, tokens.access_token, `${apiUrl}/user`)) as { id?: unknown; name?: unknown; login?: unknown };
  if (typeof user.id !== 'number' && typeof user.id !== 'string') throw new Error('GitHub named no user id');
  const emails = await githubJson(configuration, tokens.access_token, `${apiUrl}/user/emails`);
  const primary = Array.isArray(emails) ? (emails as GithubEmail[]).find((entry) => entry.primary === true && entry.verified === true) : undefined;
  return { subject: String(user.id), email: text(primary?.email), emailVerified: primary !== undefined, name: nameOf(user.name) ?? nameOf(user.login) };
}

/** The person behind a callback; throws when the provider's answer does not hold up (the caller refuses the sign-in). */
export function personOf(provider: OAuthProviderConfig, configuration: oidc.Configuration, callbackUrl: URL, pending: PendingSignIn): Promise<ProviderPerson> {
  return provider.kind === 'github' ? githubPerson(configuration, provider.apiUrl, callbackUrl, pending) : oidcPerson(configuration, callbackUrl, pending);
}

/** What the provider said when it refused (`error=` in the callback), e.g. the person cancelled. */
export const isCancellation = (query: URLSearchParams) => query.get('error') === 'access_denied';

/**
 * Why the provider's answer did not hold up, for the log: the library's message is generic
 * ("invalid response encountered"), the check that failed is its cause's ("JWT signature
 * verification failed"), and a refusal by the provider has an OAuth code (`invalid_grant`).
 * Never the cause's own details, which may hold a token's claims.
 */
export function failureReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const parts = [error.message];
  if (error.cause instanceof Error) parts.push(error.cause.message);
  const code = (error as { error?: unknown }).error;
  if (typeof code === 'string' && /^[\w.-]{1,64}$/.test(code)) parts.push(code);
  return parts.join(': ');
}
