import type { Mail } from '../../lib/mailer.ts';
import { composeMail } from '../../lib/mail-template.ts';

/** admin.revokeSessions: the owner learns why every session ended, and that nothing else changed. */
export function sessionsRevokedByAdminNotice(to: string, name: string, loginUrl: string): Mail {
  return composeMail({
    to,
    subject: 'An administrator signed your Gatehouse account out everywhere',
    title: 'You were signed out everywhere',
    paragraphs: [
      `Hello ${name},`,
      'An administrator signed your Gatehouse account out everywhere: every session ended, and any pending e-mail change or password reset link no longer works.',
      'Your password and API key were not changed. Sign in again to go on.',
    ],
    link: { url: loginUrl, label: 'Sign in' },
    after: ['If you think someone else used your account, reset your password and rotate your API key from your account page.'],
  });
}
