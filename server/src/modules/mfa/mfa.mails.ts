import type { Mail } from '../../lib/mailer.ts';
import { composeMail } from '../../lib/mail-template.ts';

const NOT_YOU = 'If it was not you, change your password now and sign out everywhere else from your account page: someone may have your password.';

/** What changed about the account's second factor, said to its owner. */
export type FactorChange = 'totp_enabled' | 'totp_disabled' | 'passkey_added' | 'passkey_removed' | 'codes_regenerated' | 'code_used' | 'reset_by_admin';

const WORDS: Record<FactorChange, { subject: string; text: string }> = {
  totp_enabled: { subject: 'Two-factor authentication is on', text: 'An authenticator app was turned on for your Gatehouse account: signing in now asks for its code after the password.' },
  totp_disabled: { subject: 'Your authenticator app was turned off', text: 'The authenticator app of your Gatehouse account was turned off.' },
  passkey_added: { subject: 'A passkey was added to your account', text: 'A passkey was added to your Gatehouse account. It signs you in on its own, or serves as the second step after your password.' },
  passkey_removed: { subject: 'A passkey was removed from your account', text: 'A passkey was removed from your Gatehouse account.' },
  codes_regenerated: { subject: 'New recovery codes were made', text: 'New recovery codes were made for your Gatehouse account; the older ones no longer work.' },
  code_used: { subject: 'A recovery code was used', text: 'One of the recovery codes of your Gatehouse account was just used. Each works once; make new ones on your account page when few are left.' },
  reset_by_admin: {
    subject: 'An administrator turned off your second factor',
    text: 'An administrator turned off the second factor of your Gatehouse account: its authenticator app, passkeys and recovery codes. Signing in needs only your password until you set one up again.',
  },
};

export function factorNotice(to: string, name: string, change: FactorChange, accountUrl: string): Mail {
  const words = WORDS[change];
  return composeMail({
    to,
    subject: words.subject,
    title: words.subject,
    paragraphs: [`Hello ${name},`, words.text, NOT_YOU],
    link: { url: accountUrl, label: 'Open your account' },
  });
}
