import type { RequestInfo } from '../../trpc/context.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { QUEUES, type PasswordResetJob } from '../../jobs.ts';
import { rateLimitSubject } from '../../lib/rate-limiter.ts';
import { recordEvent } from './auth.audit.ts';
import { AUTH_RATE_RULES, refuseIfLimited } from './auth.limits.ts';
import { passwordChangedNotice, passwordResetNotice, resetMail } from './auth.mails.ts';
import { confirmPassword } from './auth.password-check.ts';
import { checkNewPassword } from './auth.password-policy.ts';
import { revokeSessions } from './auth.sessions.ts';
import { issueToken, liveTokenOwner, TAKEOVER_LINKS, useToken, voidTokens } from './auth.tokens.ts';
import type { AuthContext } from './auth.types.ts';
import { requireStepUp, type Proof } from '../mfa/index.ts';

const FORGOT_MESSAGE = 'If an account uses this address, a link to choose a new password is on its way.';

/**
 * Enumeration-safe by construction: for every address the request does the same work, one
 * queued job, and gets the same answer. The worker then finds out whether the address has
 * an account and, if it does, mails it a link (sendResetLink); an unknown one gets nothing.
 */
export async function forgotPassword(deps: Deps, email: string, request: RequestInfo) {
  refuseIfLimited(
    await deps.rateLimiter.hit([
      { rule: AUTH_RATE_RULES.forgotPerIp, key: rateLimitSubject(request.ip) },
      { rule: AUTH_RATE_RULES.forgotPerAddress, key: email },
    ]),
  );
  const job: PasswordResetJob = { email };
  await deps.queue.insert([{ name: QUEUES.passwordReset, data: job }]);
  return { success: true as const, message: FORGOT_MESSAGE };
}

/** The worker's half of a reset request: a link for the account of `email`, if there is one; older links die. */
export async function sendResetLink(deps: Deps, email: string): Promise<void> {
  const issued = await deps.db.transaction(async (tx) => {
    const [account] = await tx.query<{ id: number; name: string }>('SELECT id, name FROM accounts WHERE email = $1', [email]);
    return account && { name: account.name, token: await issueToken(tx, deps.clock, account.id, 'reset') };
  });
  if (issued) await deps.mailer.send(resetMail(email, issued.name, `${deps.config.publicUrl}/reset-password?token=${encodeURIComponent(issued.token)}`));
}

type ResetAccount = { email: string; name: string };

/**
 * Sets the password, ends every session, clears the failed-login count, marks the address
 * verified (the mail arrived), and cancels what other mailed links were pending: a
 * registration's, and an e-mail change's (a reset says something may have been taken over).
 * The API key is kept, so integrations go on; the notice offers to rotate it.
 */
export async function resetPassword(deps: Deps, token: string, password: string, request: RequestInfo) {
  refuseIfLimited(await deps.rateLimiter.hit([{ rule: AUTH_RATE_RULES.tokenUsesPerIp, key: rateLimitSubject(request.ip) }]));
  // Checked first so a dead link costs no argon2 hash and a refused password leaves the link
  // usable for another try; used only below, in the transaction.
  const owner = await liveTokenOwner(deps.db, deps.clock, 'reset', token);
  if (!owner) throw new AppError('INVALID_TOKEN');
  await checkNewPassword(deps, password, { ...owner, field: 'password' });
  const passwordHash = await deps.passwords.hash(password);
  const account = await deps.db.transaction(async (tx): Promise<ResetAccount & { id: number } | undefined> => {
    const used = await useToken(tx, deps.clock, 'reset', token);
    if (!used) return undefined;
    const [row] = await tx.query<ResetAccount>(
      'UPDATE accounts SET password_hash = $2, email_verified = true, updated_at = $3 WHERE id = $1 RETURNING email, name',
      [used.account_id, passwordHash, deps.clock.now()],
    );
    await revokeSessions(tx, deps.clock, used.account_id);
    await voidTokens(tx, deps.clock, used.account_id, [...TAKEOVER_LINKS, 'verify']);
    await recordEvent(tx, deps.clock, 'password.reset', { accountId: used.account_id }, request);
    return { id: used.account_id, ...row };
  });
  if (!account) throw new AppError('INVALID_TOKEN');
  await deps.rateLimiter.clear({ rule: AUTH_RATE_RULES.failedLoginsPerAccount, key: account.email });
  deps.authCache.evictAccount(account.id);
  deps.mailer.sendInBackground(passwordResetNotice(account.email, account.name, `${deps.config.publicUrl}/account`));
  return { success: true as const, message: 'Your password is changed, and every session was signed out. You can log in now.' };
}

/**
 * Needs the current password. Every other session ends at once on every instance; the
 * calling JWT's own stays (called with the API key there is none to keep). Pending e-mail
 * change and reset links die too: the owner changing a password is often taking the account
 * back from someone who asked for one of them.
 */
export async function changePassword(deps: Deps, auth: AuthContext, input: { current_password: string; new_password: string } & Proof, request: RequestInfo) {
  await confirmPassword(deps, auth, input.current_password, request);
  await checkNewPassword(deps, input.new_password, { email: auth.account.email, name: auth.account.name, field: 'new_password' });
  await requireStepUp(deps, auth, input, request);
  const passwordHash = await deps.passwords.hash(input.new_password);
  await deps.db.transaction(async (tx) => {
    await tx.query('UPDATE accounts SET password_hash = $2, updated_at = $3 WHERE id = $1', [auth.account.id, passwordHash, deps.clock.now()]);
    await revokeSessions(tx, deps.clock, auth.account.id, auth.sessionId);
    await voidTokens(tx, deps.clock, auth.account.id, TAKEOVER_LINKS);
    await recordEvent(tx, deps.clock, 'password.changed', { accountId: auth.account.id }, request);
  });
  deps.authCache.evictAccount(auth.account.id);
  deps.mailer.sendInBackground(passwordChangedNotice(auth.account.email, auth.account.name, `${deps.config.publicUrl}/account`));
  return { success: true as const };
}
