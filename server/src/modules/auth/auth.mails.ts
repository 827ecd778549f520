import type { Mail } from '../../lib/mailer.ts';
import { escapeHtml } from '../../lib/text.ts';

export type MailParts = {
  to: string;
  /** Never a secret: subjects show in notifications and inbox lists. */
  subject: string;
  title: string;
  paragraphs: string[];
  link?: { url: string; label: string };
  /** Paragraphs after the link. */
  after?: string[];
};

/** One shape for every mail: the same words as plain text and as simple, inline-styled HTML. */
export function composeMail({ to, subject, title, paragraphs, link, after = [] }: MailParts): Mail {
  const text = [...paragraphs, ...(link ? [link.url] : []), ...after].join('\n\n');
  const html = (lines: string[]) => lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n');
  const button = link
    ? `<p><a href="${escapeHtml(link.url)}" style="display:inline-block;padding:10px 18px;background:#1d4ed8;color:#fff;text-decoration:none;border-radius:6px">${escapeHtml(link.label)}</a></p>
       <p style="color:#555;font-size:13px">Or open this link: ${escapeHtml(link.url)}</p>`
    : '';
  return {
    to,
    subject,
    text,
    html: `<!doctype html><html><body style="font-family:system-ui,sans-serif;max-width:560px;margin:auto">
<h2>${escapeHtml(title)}</h2>
${html(paragraphs)}
${button}
${html(after)}
</body></html>`,
  };
}

const NOT_YOU = 'If it was not you, reset your password now and sign out everywhere else from your account page.';

/**
 * `repeated`: the address was registered before and not confirmed. This link carries the new
 * registration's password, so the mail says so: someone who registered earlier and did not
 * register again should not use it.
 */
export function verificationMail(to: string, name: string, verifyUrl: string, options: { repeated?: boolean } = {}): Mail {
  const warning = options.repeated
    ? ['This address was registered again. The link confirms the latest registration, with the password chosen in it. If you registered earlier but not just now, do not use this link: register again to get one for your own password.']
    : [];
  return composeMail({
    to,
    subject: 'Confirm your e-mail address',
    title: 'Confirm your e-mail address',
    paragraphs: [`Hello ${name},`, 'Please confirm your e-mail address to finish setting up your Gatehouse account. The link is valid for 24 hours.', ...warning],
    link: { url: verifyUrl, label: 'Confirm e-mail address' },
    after: ['If you did not sign up, ignore this message.'],
  });
}

export function alreadyRegisteredMail(to: string, name: string, loginUrl: string): Mail {
  return composeMail({
    to,
    subject: 'Someone tried to register with your e-mail address',
    title: 'Registration attempt',
    paragraphs: [
      `Hello ${name},`,
      'Someone tried to create a Gatehouse account with this e-mail address, which already has an account. Nothing about your account has changed.',
      'If it was you, just log in. If it was not, you can ignore this message.',
    ],
    link: { url: loginUrl, label: 'Log in' },
  });
}

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

export function apiKeyRotatedNotice(to: string, name: string, previousUntil: Date | undefined): Mail {
  const previous = previousUntil
    ? `The previous key keeps working until ${previousUntil.toISOString()}; after that only the new one does.`
    : 'The previous key stopped working at once.';
  return composeMail({
    to,
    subject: 'Your Gatehouse API key was replaced',
    title: 'Your API key was replaced',
    paragraphs: [`Hello ${name},`, 'A new API key was made for your Gatehouse account.', previous, NOT_YOU],
  });
}

export function emailChangeMail(to: string, name: string, confirmUrl: string): Mail {
  return composeMail({
    to,
    subject: 'Confirm your new e-mail address',
    title: 'Confirm your new e-mail address',
    paragraphs: [`Hello ${name},`, 'Your Gatehouse account asked to use this address from now on. The change happens once you confirm; the link is valid for 24 hours and works once.'],
    link: { url: confirmUrl, label: 'Confirm new address' },
    after: ['If you did not ask for this, ignore this message: nothing changes.'],
  });
}

export function emailChangeRequestedNotice(to: string, name: string, newEmail: string, accountUrl: string): Mail {
  return composeMail({
    to,
    subject: 'A change of your e-mail address was requested',
    title: 'E-mail change requested',
    paragraphs: [
      `Hello ${name},`,
      `Someone signed in to your Gatehouse account asked to change its e-mail address to ${newEmail}. It changes only when that address confirms; until then this one stays.`,
      'If it was not you, cancel the change on your account page, then change your password: that also voids the link.',
    ],
    link: { url: accountUrl, label: 'Open your account' },
  });
}

/** To the address an account just left: the last word it gets, so it says what to do if it was not its owner. */
export function emailChangedNotice(to: string, name: string, newEmail: string): Mail {
  return composeMail({
    to,
    subject: 'Your Gatehouse e-mail address was changed',
    title: 'Your e-mail address was changed',
    paragraphs: [
      `Hello ${name},`,
      `Your Gatehouse account now uses ${newEmail}: sign-in, password resets and notices go there from now on, and this address gets nothing more.`,
      'If you did not make this change, contact support at once: someone else may control your account.',
    ],
  });
}

/** The new address of an e-mail change already has an account: it hears of the attempt, gets no link. */
export function emailTakenNotice(to: string, name: string): Mail {
  return composeMail({
    to,
    subject: 'Someone tried to move an account to your e-mail address',
    title: 'E-mail change attempt',
    paragraphs: [
      `Hello ${name},`,
      'Another Gatehouse account asked to use this e-mail address, which already belongs to your account. Nothing about your account has changed, and no link was sent.',
    ],
  });
}

export function accountDeletedNotice(to: string, name: string): Mail {
  return composeMail({
    to,
    subject: 'Your Gatehouse account was deleted',
    title: 'Your account was deleted',
    paragraphs: [
      `Hello ${name},`,
      'Your Gatehouse account was deleted, with its sessions, API key, sites, channels and messages. This address may be used to register again.',
      'If you did not delete it, contact support.',
    ],
  });
}

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
