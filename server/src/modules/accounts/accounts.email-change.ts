import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { refuseIfLimited } from '../../errors/rate-limited.ts';
import { rateLimitSubject } from '../../lib/rate-limiter.ts';
import { recordEvent } from '../activity/index.ts';
import { requireStepUp, type Proof } from '../mfa/index.ts';
import { confirmPassword } from '../passwords/index.ts';
import type { AuthContext } from '../sessions/index.ts';
import { promoteIfListed, promotionLogged } from './accounts.admin-emails.ts';
import { emitAccountEvent } from './accounts.events.ts';
import { ACCOUNT_RATE_RULES } from './accounts.limits.ts';
import { emailChangedNotice, emailChangeMail, emailChangeRequestedNotice, emailTakenNotice } from './accounts.mails.ts';
import { accountByEmail, emailIsTaken, lockAccount, setEmail } from './accounts.repo.ts';
import { issueToken, pendingEmailChange, TAKEOVER_LINKS, useToken, voidTokens } from './accounts.tokens.ts';
import { forgetCachedAccount } from '../sessions/index.ts';

const REQUESTED_MESSAGE = 'Check the new address: we sent it a link to confirm the change. Until then your address stays as it is.';

/**
 * Needs the password. The new address gets a link, the current one a notice, and nothing
 * changes until the link is used. An address that another account has gets the same answer
 * and a notice instead of a link, so the answer says nothing about who uses which address;
 * a token is made all the same (never mailed, so never used), so that the change shows as
 * pending on the account page whichever way it went.
 */
export async function changeEmail(deps: Deps, auth: AuthContext, input: { new_email: string; password?: string } & Proof, request: RequestInfo) {
  await confirmPassword(deps, auth, input.password, request);
  await requireStepUp(deps, auth, input, request);
  refuseIfLimited(await deps.rateLimiter.hit([{ rule: ACCOUNT_RATE_RULES.emailChangesPerAccount, key: String(auth.account.id) }]));
  const { account } = auth;
  const accountUrl = `${deps.config.publicUrl}/account`;
  const mails = await deps.db.transaction(async (tx) => {
    const holder = await accountByEmail(tx, input.new_email);
    await recordEvent(tx, deps.clock, 'email.change_requested', { accountId: account.id }, request);
    if (holder?.id === account.id) {
      // Earlier links die whichever way this goes: if they lived on only when the new address
      // is taken, one of them would tell whether it is.
      await voidTokens(tx, deps.clock, account.id, ['email_change']);
      return [];
    }
    const token = await issueToken(tx, deps.clock, account.id, 'email_change', { newEmail: input.new_email });
    const notice = emailChangeRequestedNotice(account.email, account.name, input.new_email, accountUrl);
    if (holder) return [emailTakenNotice(input.new_email, holder.name), notice];
    return [emailChangeMail(input.new_email, account.name, `${deps.config.publicUrl}/confirm-email?token=${encodeURIComponent(token)}`), notice];
  });
  for (const mail of mails) deps.mailer.sendInBackground(mail);
  return { success: true as const, message: REQUESTED_MESSAGE };
}

/**
 * The link from the new address: the account moves to it, and it counts as verified (the
 * mail arrived), which makes it an admin if ADMIN_EMAILS lists the address and never promoted. If the address was taken in the meantime, the link is spent and refused.
 * The address the account leaves hears of it: if its owner did not do this, it is their
 * last chance to know.
 */
export async function confirmEmailChange(deps: Deps, token: string, request: RequestInfo) {
  refuseIfLimited(await deps.rateLimiter.hit([{ rule: ACCOUNT_RATE_RULES.tokenUsesPerIp, key: rateLimitSubject(request.ip) }]));
  const changed = await deps.db.transaction(async (tx) => {
    const used = await useToken(tx, deps.clock, 'email_change', token);
    if (!used?.new_email) return undefined;
    if (await emailIsTaken(tx, used.new_email)) return undefined;
    // The token just used is the account's: tokens go with their account (ON DELETE CASCADE).
    const before = (await lockAccount(tx, { id: used.account_id }))!;
    await setEmail(tx, used.account_id, used.new_email, deps.clock.now());
    await voidTokens(tx, deps.clock, used.account_id, TAKEOVER_LINKS);
    await recordEvent(tx, deps.clock, 'email.changed', { accountId: used.account_id }, request);
    const promoted = await promoteIfListed(tx, deps, { id: used.account_id, email: used.new_email }, request);
    await emitAccountEvent(tx, deps.clock, used.account_id, promoted ? ['email', 'role'] : ['email']);
    return { accountId: used.account_id, promoted, notice: emailChangedNotice(before.email, before.name, used.new_email) };
  }).catch((error: { parent?: { code?: string }; code?: string }) => {
    // A registration that took the address between the check and the update.
    if ((error.parent?.code ?? error.code) === '23505') return undefined;
    throw error;
  });
  if (changed === undefined) throw new AppError('INVALID_TOKEN');
  forgetCachedAccount(deps, changed.accountId);
  if (changed.promoted) promotionLogged(deps, changed.accountId);
  deps.mailer.sendInBackground(changed.notice);
  return { success: true as const, message: 'Your new e-mail address is confirmed: use it to log in from now on.' };
}

/** The change waiting for its link, if any, so the owner can see it and cancel it. */
export async function showPendingEmailChange(deps: Deps, auth: AuthContext) {
  const pending = await pendingEmailChange(deps.db, deps.clock, auth.account.id);
  return {
    success: true as const,
    pending: pending ? { new_email: pending.new_email, requested_at: pending.created_at.toISOString(), expires_at: pending.expires_at.toISOString() } : null,
  };
}

/** Voids the pending change's link. Asking when nothing is pending is no error: the outcome is the same. */
export async function cancelEmailChange(deps: Deps, auth: AuthContext, request: RequestInfo) {
  const cancelled = await deps.db.transaction(async (tx) => {
    const count = await voidTokens(tx, deps.clock, auth.account.id, ['email_change']);
    if (count) await recordEvent(tx, deps.clock, 'email.change_cancelled', { accountId: auth.account.id }, request);
    return count > 0;
  });
  return {
    success: true as const,
    message: cancelled ? 'The e-mail change was cancelled: its link no longer works.' : 'No e-mail change was pending.',
  };
}
