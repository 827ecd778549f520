import type { Mail } from '../../lib/mailer.ts';
import { composeMail } from '../../lib/mail-template.ts';

const NOT_YOU = 'If it was not you, sign in, disconnect it from your account page and change your password: someone may have access to your account.';

/** A provider was connected to, or disconnected from, the account: said to its owner. */
export function identityNotice(to: string, name: string, change: 'linked' | 'unlinked', label: string, accountUrl: string): Mail {
  const subject = change === 'linked' ? `${label} was connected to your account` : `${label} was disconnected from your account`;
  const said =
    change === 'linked'
      ? `Your ${label} account was connected to your Gatehouse account: "Continue with ${label}" now signs you in.`
      : `Your ${label} account was disconnected from your Gatehouse account: it no longer signs you in.`;
  return composeMail({ to, subject, title: subject, paragraphs: [`Hello ${name},`, said, NOT_YOU], link: { url: accountUrl, label: 'Open your account' } });
}
