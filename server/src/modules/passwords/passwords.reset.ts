import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { refuseIfLimited } from '../../errors/rate-limited.ts';
import { QUEUES, type PasswordResetJob } from '../../jobs.ts';
import { rateLimitSubject } from '../../lib/rate-limiter.ts';
import {
  accountByEmail,
  ACCOUNT_RATE_RULES,
  emitAccountEvent,
  issueToken,
  liveTokenOwner,
  lockAccount,
  setPasswordHashByMail,
  TAKEOVER_LINKS,
  useToken,
  voidTokens,
} from '../accounts/index.ts';
import { recordEvent } from '../activity/index.ts';
import { emitSecurityChange } from '../events/index.ts';
import { forgetCachedAccount, revokeSessions, SESSION_RATE_RULES } from '../sessions/index.ts';
import { PASSWORD_RATE_RULES } from './passwords.limits.ts';
import { passwordResetNotice, resetMail } from './passwords.mails.ts';
import { checkNewPassword } from './passwords.policy.ts';

const FORGOT_MESSAGE = 'If an account uses this address, a link to choose a new password is on its way.';

/**
 * Enumeration-safe by construction: for every address the request does the same work, one
 * queued job, and gets the same answer. The worker then finds out whether the address has
 * an account and, if it does, mails it a link (sendResetLink); an unknown one gets nothing.
 */
export async function forgotPassword(deps: Deps, email: string, request: RequestInfo) {
  refuseIfLimited(
    await deps.rateLimiter.hit([
      { rule: PASSWORD_RATE_RULES.forgotPerIp, key: rateLimitSubject(request.ip) },
      { rule: PASSWORD_RATE_RULES.forgotPerAddress, key: email },
    ]),
  );
  const job: PasswordResetJob = { email };
  await deps.queue.insert([{ name: QUEUES.passwordReset, data: job }]);
  return { success: true as const, message: FORGOT_MESSAGE };
}

/** The worker's half of a reset request: a link for the account of `email`, if there is one; older links die. */
export async function sendResetLink(deps: Deps, email: string): Promise<void> {
  const issued = await deps.db.transaction(async (tx) => {
    const account = await accountByEmail(tx, email);
    return account && { name: account.name, token: await issueToken(tx, deps.clock, account.id, 'reset') };
  });
  if (issued) await deps.mailer.send(resetMail(email, issued.name, `${deps.config.publicUrl}/reset-password?token=${encodeURIComponent(issued.token)}`));
}

type ResetAccount = { email: string; name: string };

/**
 * Sets the password, ends every session, clears the failed-login count, marks the address
 * verified (the mail arrived: `account.created` for an account that was not), and cancels what other mailed links were pending: a
 * registration's, and an e-mail change's (a reset says something may have been taken over).
 * The API key is kept, so integrations go on; the notice offers to rotate it.
 */
export async function resetPassword(deps: Deps, token: string, password: string, request: RequestInfo) {
  refuseIfLimited(await deps.rateLimiter.hit([{ rule: ACCOUNT_RATE_RULES.tokenUsesPerIp, key: rateLimitSubject(request.ip) }]));
  // Checked first so a dead link costs no argon2 hash and a refused password leaves the link
  // usable for another try; used only below, in the transaction.
  const owner = await liveTokenOwner(deps.db, deps.clock, 'reset', token);
  if (!owner) throw new AppError('INVALID_TOKEN');
  await checkNewPassword(deps, password, { ...owner, field: 'password' });
  const passwordHash = await deps.passwords.hash(password);
  const account = await deps.db.transaction(async (tx): Promise<ResetAccount & { id: number } | undefined> => {
    const used = await useToken(tx, deps.clock, 'reset', token);
    if (!used) return undefined;
    // Locked before it is marked verified, so that a verification link used at the same time cannot report it too.
    const before = await lockAccount(tx, { id: used.account_id });
    const row = await setPasswordHashByMail(tx, used.account_id, passwordHash, deps.clock.now());
    await revokeSessions(tx, deps.clock, used.account_id);
    await voidTokens(tx, deps.clock, used.account_id, [...TAKEOVER_LINKS, 'verify']);
    await recordEvent(tx, deps.clock, 'password.reset', { accountId: used.account_id }, request);
    // The mailed link proved the address, as a verification link does: the activity says so,
    // and an account never verified exists for the platform from now.
    if (before && !before.email_verified) {
      await recordEvent(tx, deps.clock, 'email.verified', { accountId: used.account_id }, request);
      await emitAccountEvent(tx, deps.clock, used.account_id);
    }
    await emitSecurityChange(tx, deps.clock, used.account_id, 'password');
    return { id: used.account_id, ...row };
  });
  if (!account) throw new AppError('INVALID_TOKEN');
  await deps.rateLimiter.clear({ rule: SESSION_RATE_RULES.failedLoginsPerAccount, key: account.email });
  forgetCachedAccount(deps, account.id);
  deps.mailer.sendInBackground(passwordResetNotice(account.email, account.name, `${deps.config.publicUrl}/account`));
  return { success: true as const, message: 'Your password is changed, and every session was signed out. You can log in now.' };
}
