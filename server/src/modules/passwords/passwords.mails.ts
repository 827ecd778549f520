import type { Mail } from '../../lib/mailer.ts';
import { composeMail, NOT_YOU } from '../../lib/mail-template.ts';

export function resetMail(to: string, name: string, resetUrl: string): Mail {
  return composeMail({
    to,
    subject: 'Reset your Gatehouse password',
    title: 'Reset your password',
    paragraphs: [`Hello ${name},`, 'Someone asked to reset the password of your Gatehouse account. The link is valid for one hour and works once.'],
    link: { url: resetUrl, label: 'Choose a new password' },
    after: ['If you did not ask for this, ignore this message: your password stays as it is.'],
  });
}

/** After a reset: every session was ended; the API key stays, so the mail offers to replace it. */
export function passwordResetNotice(to: string, name: string, accountUrl: string): Mail {
  return composeMail({
    to,
    subject: 'Your Gatehouse password was reset',
    title: 'Your password was reset',
    paragraphs: [
      `Hello ${name},`,
      'The password of your Gatehouse account was just reset, and every session was signed out.',
      'Your API key was not changed, so your integrations keep working. If you think it may have been exposed, rotate it from your account page (or POST /api/v1/auth/api-key/rotate).',
    ],
    link: { url: accountUrl, label: 'Open your account' },
    after: ['If you did not reset your password, reset it again now and rotate your API key.'],
  });
}

export function passwordChangedNotice(to: string, name: string, accountUrl: string): Mail {
  return composeMail({
    to,
    subject: 'Your Gatehouse password was changed',
    title: 'Your password was changed',
    paragraphs: [`Hello ${name},`, 'The password of your Gatehouse account was just changed, and your other sessions were signed out.', NOT_YOU],
    link: { url: accountUrl, label: 'Open your account' },
  });
}
