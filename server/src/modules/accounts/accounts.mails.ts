import type { Mail } from '../../lib/mailer.ts';
import { composeMail } from '../../lib/mail-template.ts';

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

/**
 * A resend for an address registered more than once and not confirmed: no link. A resent
 * link carries the latest registration's password, which whoever asked for the resend may
 * not have chosen (someone else may have registered the address after them). Registering
 * again mails a link for one's own password. No name: the registrations each chose one.
 */
export function registeredTwiceMail(to: string, registerUrl: string): Mail {
  return composeMail({
    to,
    subject: 'Confirm your e-mail address: register again',
    title: 'Register again to confirm',
    paragraphs: [
      'Hello,',
      'A new confirmation link was asked for this address. It was registered more than once and not confirmed yet, so no link was sent: a link confirms the latest registration, with the password chosen in it, which may not be yours.',
      'To confirm the address with your own password, register again: the message that registration sends has the link for it.',
    ],
    link: { url: registerUrl, label: 'Register again' },
    after: ['If you did not ask for this, ignore this message.'],
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
