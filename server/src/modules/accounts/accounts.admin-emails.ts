import type { Deps } from '../../deps.ts';
import type { Queryable } from '../../lib/db.ts';
import type { RequestInfo } from '../../lib/request.ts';
import { recordEvent } from '../activity/index.ts';
import { changeRole, claimAdminEmailPromotion } from './accounts.repo.ts';

// ADMIN_EMAILS (docs/CONFIGURATION.md): the first admin without a CLI step. An account whose
// address is listed becomes an admin when one of this service's own mailed links verifies
// that address: a registration's confirmation, or an e-mail change's confirmation to the
// listed address. Nothing else promotes: not an identity provider's word on the address
// (identities/ never calls this), not a password reset (its link proves the mailbox, but
// its purpose is the password, and an address it verifies was never confirmed as an address).

/** What a promotion is made of, in the verification's transaction. */
type PromotionDeps = Pick<Deps, 'config' | 'clock'>;

/**
 * Makes the account an admin if `email` is listed and has never promoted before, in the
 * caller's transaction (the one that verified the address): a /me right after the link
 * shows the role. Once per address, kept in admin_email_promotions: a later demotion stands,
 * whichever account holds the address then. An account that was an admin already uses the
 * address's turn all the same. Returns whether the role changed, for the caller to log once
 * its transaction has committed (promotionLogged).
 */
export async function promoteIfListed(tx: Queryable, deps: PromotionDeps, account: { id: number; email: string }, request: RequestInfo): Promise<boolean> {
  if (!deps.config.adminEmails.includes(account.email)) return false;
  const now = deps.clock.now();
  if (!(await claimAdminEmailPromotion(tx, account.email, now))) return false;
  if (!(await changeRole(tx, account.id, 'admin', now))) return false;
  await recordEvent(tx, deps.clock, 'account.promoted', { accountId: account.id }, request, { role: 'admin', by: 'ADMIN_EMAILS' });
  return true;
}

/** The log line of a promotion, once it has committed: an operator should know whom the setting made an admin. */
export function promotionLogged(deps: Pick<Deps, 'logger'>, accountId: number): void {
  deps.logger.warn({ account: accountId, by: 'ADMIN_EMAILS' }, 'ADMIN_EMAILS made an account an admin: its listed address was verified by a link of this service');
}
