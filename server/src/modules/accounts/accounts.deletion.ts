import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { recordEvent } from '../activity/index.ts';
import { emitEvent } from '../events/index.ts';
import { requireStepUp, type Proof } from '../mfa/index.ts';
import { confirmPassword } from '../passwords/index.ts';
import type { AuthContext } from '../sessions/index.ts';
import { accountDeletedNotice } from './accounts.mails.ts';
import { deleteAccountRow } from './accounts.repo.ts';
import { forgetCachedAccount } from '../sessions/index.ts';

/**
 * Needs the password. One transaction removes the account and, by the schema's cascades, its
 * sessions, tokens, sites with their payments, channels with their messages, link codes and
 * linked chats; its billing subscriptions forget it, so later billing events for it are
 * kept as ignored. The activity log keeps the deletion, without the account. The address
 * may register again at once.
 */
export async function deleteAccount(deps: Deps, auth: AuthContext, input: { password?: string } & Proof, request: RequestInfo) {
  await confirmPassword(deps, auth, input.password, request);
  await requireStepUp(deps, auth, input, request);
  const { account } = auth;
  await deps.db.transaction(async (tx) => {
    await recordEvent(tx, deps.clock, 'account.deleted', { accountId: account.id }, request, { account_id: account.id });
    await deleteAccountRow(tx, account.id);
    await emitEvent(tx, deps.clock, { type: 'account.deleted', data: { account_id: account.id } });
  });
  forgetCachedAccount(deps, account.id);
  // Its sites and channels are gone: their webhooks are a 404 from now on, here at once.
  deps.webhookSecrets.evictGroup(account.id);
  deps.mailer.sendInBackground(accountDeletedNotice(account.email, account.name));
  return { success: true as const };
}
