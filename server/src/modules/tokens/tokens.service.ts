import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import type { AuthContext, SecondStep, SessionSignIn } from '../sessions/index.ts';

/** Every access token's `client_id` (RFC 9068): the client that asked is this service's own caller. */
export const CLIENT_ID = 'gatehouse';

/** RFC 8176 names of a sign-in's first step: a password, a passkey alone, else an identity provider. */
const FIRST_STEP: Record<string, string> = { password: 'pwd', passkey: 'hwk' };
const SECOND_STEP: Record<SecondStep, string> = { totp: 'otp', recovery_code: 'otp', passkey: 'hwk' };

/**
 * How the caller proved who they are, as RFC 8176 `amr` values: the session's first step,
 * then its second factor and `mfa` when it had one; `key` for an API key, which has no
 * sign-in at all.
 */
export function amrOf(signIn: SessionSignIn | undefined): string[] {
  if (!signIn) return ['key'];
  const first = FIRST_STEP[signIn.via] ?? 'fed';
  if (!signIn.secondStep) return [first];
  return [...new Set([first, SECOND_STEP[signIn.secondStep]]), 'mfa'];
}

/**
 * A token for `audience` saying who the caller is, for another service of the platform to
 * check on its own (docs/ACCESS-TOKENS.md). Nothing is written: the caller's credential was
 * checked as on any route (a revoked, idle or expired session, a deleted account or a
 * rotated key got no further), and the token is not kept anywhere; it lives until its `exp`.
 */
export async function mintAccessToken(deps: Deps, auth: AuthContext, audience: string) {
  const { audiences } = deps.config.accessTokens;
  if (!audiences.length || !deps.accessTokens.canSign) throw new AppError('NOT_FOUND', 'Access tokens are not enabled here: ACCESS_TOKEN_AUDIENCES is not set.');
  if (!audiences.includes(audience)) {
    throw new AppError('VALIDATION_FAILED', undefined, { issues: [{ path: 'audience', message: 'must be one of the audiences this service issues tokens for (ACCESS_TOKEN_AUDIENCES)' }] });
  }
  const { account } = auth;
  const accessToken = await deps.accessTokens.sign({
    sub: String(account.id),
    aud: audience,
    client_id: CLIENT_ID,
    ...(auth.sessionId ? { sid: auth.sessionId } : {}),
    role: account.role,
    plan: account.plan,
    email: account.email,
    email_verified: account.email_verified,
    amr: amrOf(auth.signIn),
  });
  return { success: true as const, access_token: accessToken, token_type: 'Bearer' as const, expires_in: deps.accessTokens.ttlSeconds };
}
