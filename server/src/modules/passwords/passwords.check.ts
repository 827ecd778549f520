import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { refuseIfLimited } from '../../errors/rate-limited.ts';
import { passwordHashOf } from '../accounts/index.ts';
import { recordEvent } from '../activity/index.ts';
import { linkedProviders, startUrl } from '../identities/index.ts';
import { SESSION_RATE_RULES, sessionSignIn, type AuthContext } from '../sessions/index.ts';
import { PASSWORD_RATE_RULES } from './passwords.limits.ts';

/** How recent a sign-in through a provider must be to stand in for a password the account does not have. */
export const REAUTH_WINDOW_MS = 10 * 60_000;

/**
 * A signed-in caller proves it knows the password before a sensitive change (password,
 * e-mail, deletion). The try is counted before the check, per session (or per account for an
 * API key), so a stolen session gets a few guesses, not a search; a wrong password also
 * counts as a failed login of the account, and is in its activity. The owner's own session
 * is not held up by strangers failing to log in: its count is its own.
 */
export async function confirmPassword(deps: Deps, auth: AuthContext, password: string | undefined, request: RequestInfo, field = 'password'): Promise<void> {
  const passwordHash = await passwordHashOf(deps.db, auth.account.id);
  if (passwordHash === null) return confirmRecentSignIn(deps, auth);
  if (password === undefined) throw new AppError('VALIDATION_FAILED', undefined, { issues: [{ path: field, message: 'is required' }] });
  const caller = { rule: PASSWORD_RATE_RULES.passwordChecksPerCaller, key: auth.sessionId ?? `api-key:${auth.account.id}` };
  refuseIfLimited(await deps.rateLimiter.hit([caller]));
  if (passwordHash === undefined || !(await deps.passwords.verify(passwordHash, password))) {
    await deps.rateLimiter.hit([{ rule: SESSION_RATE_RULES.failedLoginsPerAccount, key: auth.account.email }]);
    await recordEvent(deps.db, deps.clock, 'login.failed', { accountId: auth.account.id }, request);
    throw new AppError('INVALID_CREDENTIALS', 'The password is wrong.');
  }
  await deps.rateLimiter.refund(caller);
}

/**
 * An account made through an identity provider has no password to ask for: a sign-in
 * through one of its providers in the last 10 minutes, by this very session, stands in.
 * An API key, an older session, or one begun otherwise gets 403 REAUTH_REQUIRED with the
 * provider's start URL, which brings the browser back to the account page.
 */
async function confirmRecentSignIn(deps: Deps, auth: AuthContext): Promise<void> {
  const signIn = auth.sessionId ? await sessionSignIn(deps.db, auth.sessionId) : undefined;
  const configured = deps.config.oauthProviders.map((provider) => provider.name);
  // One of its providers: configured, and still linked (a provider unlinked since stands in for nothing).
  const linked = (await linkedProviders(deps.db, auth.account.id)).filter((name) => configured.includes(name));
  const byProvider = signIn && linked.includes(signIn.via);
  if (byProvider && deps.clock.now().getTime() - signIn.authTime.getTime() <= REAUTH_WINDOW_MS) return;
  const provider = byProvider ? signIn.via : linked[0];
  const details = provider ? { reauth_url: startUrl(deps.config, provider, { next: '/account' }) } : {};
  throw new AppError('REAUTH_REQUIRED', undefined, { details });
}
