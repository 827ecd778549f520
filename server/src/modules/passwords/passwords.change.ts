import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { setPasswordHash, TAKEOVER_LINKS, voidTokens } from '../accounts/index.ts';
import { recordEvent } from '../activity/index.ts';
import { emitSecurityChange } from '../events/index.ts';
import { endStepUp, requireStepUp, type Proof } from '../mfa/index.ts';
import { type AuthContext, forgetCachedAccount, revokeSessions } from '../sessions/index.ts';
import { confirmPassword } from './passwords.check.ts';
import { passwordChangedNotice } from './passwords.mails.ts';
import { checkNewPassword } from './passwords.policy.ts';

/**
 * Needs the current password. Every other session ends at once on every instance; the
 * calling JWT's own stays (called with the API key there is none to keep), without the
 * step-up it may have had. Pending e-mail
 * change and reset links die too: the owner changing a password is often taking the account
 * back from someone who asked for one of them.
 */
export async function changePassword(deps: Deps, auth: AuthContext, input: { current_password?: string; new_password: string } & Proof, request: RequestInfo) {
  await confirmPassword(deps, auth, input.current_password, request, 'current_password');
  await checkNewPassword(deps, input.new_password, { email: auth.account.email, name: auth.account.name, field: 'new_password' });
  await requireStepUp(deps, auth, input, request);
  const passwordHash = await deps.passwords.hash(input.new_password);
  await deps.db.transaction(async (tx) => {
    await setPasswordHash(tx, auth.account.id, passwordHash, deps.clock.now());
    await revokeSessions(tx, deps.clock, auth.account.id, auth.sessionId);
    // The session that stays is stepped up no more: the next change proves the factor again.
    if (auth.sessionId) await endStepUp(tx, auth.sessionId);
    await voidTokens(tx, deps.clock, auth.account.id, TAKEOVER_LINKS);
    await recordEvent(tx, deps.clock, 'password.changed', { accountId: auth.account.id }, request);
    await emitSecurityChange(tx, deps.clock, auth.account.id, 'password');
  });
  forgetCachedAccount(deps, auth.account.id);
  deps.mailer.sendInBackground(passwordChangedNotice(auth.account.email, auth.account.name, `${deps.config.publicUrl}/account`));
  return { success: true as const };
}
