import type { RequestInfo } from '../../trpc/context.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { refuseIfLimited } from '../../errors/rate-limited.ts';
import { passwordHashOf } from '../accounts/index.ts';
import { recordEvent } from '../activity/index.ts';
import { SESSION_RATE_RULES, type AuthContext } from '../sessions/index.ts';
import { PASSWORD_RATE_RULES } from './passwords.limits.ts';

/**
 * A signed-in caller proves it knows the password before a sensitive change (password,
 * e-mail, deletion). The try is counted before the check, per session (or per account for an
 * API key), so a stolen session gets a few guesses, not a search; a wrong password also
 * counts as a failed login of the account, and is in its activity. The owner's own session
 * is not held up by strangers failing to log in: its count is its own.
 */
export async function confirmPassword(deps: Deps, auth: AuthContext, password: string, request: RequestInfo): Promise<void> {
  const caller = { rule: PASSWORD_RATE_RULES.passwordChecksPerCaller, key: auth.sessionId ?? `api-key:${auth.account.id}` };
  refuseIfLimited(await deps.rateLimiter.hit([caller]));
  const passwordHash = await passwordHashOf(deps.db, auth.account.id);
  if (!passwordHash || !(await deps.passwords.verify(passwordHash, password))) {
    await deps.rateLimiter.hit([{ rule: SESSION_RATE_RULES.failedLoginsPerAccount, key: auth.account.email }]);
    await recordEvent(deps.db, deps.clock, 'login.failed', { accountId: auth.account.id }, request);
    throw new AppError('INVALID_CREDENTIALS', 'The password is wrong.');
  }
  await deps.rateLimiter.refund(caller);
}
