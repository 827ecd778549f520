import type { Clock } from '../../lib/clock.ts';
import type { Queryable } from '../../lib/db.ts';
import type { Mail } from '../../lib/mailer.ts';
import { registeredTwiceMail, verificationMail } from './accounts.mails.ts';
import { latestRegistration, passwordHashOf, type LockedAccount } from './accounts.repo.ts';
import { issueToken } from './accounts.tokens.ts';

// A verification link sent again: by the owner (resend-verification) or by an administrator
// (admin.resendVerification). Free of Deps, so the face may offer it.

export const verifyUrl = (publicUrl: string, token: string) => `${publicUrl}/verify-email?token=${encodeURIComponent(token)}`;

/**
 * A new link for an unverified account, locked by the caller, carrying its latest
 * registration, so resending never brings back an older one. An address registered again
 * since its first registration gets no link at all but a mail asking to register once more:
 * the latest registration may not be the mailbox owner's, and confirming it would hand the
 * account to whoever made it.
 */
export async function verificationMailFor(tx: Queryable, clock: Clock, publicUrl: string, account: LockedAccount): Promise<Mail> {
  const latest = await latestRegistration(tx, account.id);
  // The account's own hash is its first registration's: a later one waits in its token until confirmed.
  if (latest && latest.password_hash !== (await passwordHashOf(tx, account.id))) return registeredTwiceMail(account.email, `${publicUrl}/register`);
  const registration = latest && { passwordHash: latest.password_hash, name: latest.name, company: latest.company };
  const token = await issueToken(tx, clock, account.id, 'verify', registration);
  return verificationMail(account.email, registration?.name ?? account.name, verifyUrl(publicUrl, token));
}
