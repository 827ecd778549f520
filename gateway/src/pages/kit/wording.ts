import Bowser from 'bowser';

/**
 * A session's device as its owner knows it: "Chrome on Linux", "Safari on iOS". A client
 * that is no browser is named by its first product token ("curl"), so a script's session is
 * still told apart; the raw user agent stays in the row's tooltip.
 */
export function deviceName(userAgent: string | null): string {
  if (!userAgent?.trim()) return 'Unknown device';
  const { browser, os } = Bowser.parse(userAgent);
  if (browser.name) return os.name ? `${browser.name} on ${os.name}` : browser.name;
  return /^[^\s/;()]{1,40}/.exec(userAgent.trim())?.[0] ?? 'Unknown device';
}

/** How long to wait, in words a person reads at a glance ("about 14 minutes"). */
export function waitText(seconds: number): string {
  if (seconds < 60) return seconds <= 1 ? 'a second' : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 90) return minutes === 1 ? 'a minute' : `about ${minutes} minutes`;
  const hours = Math.round(minutes / 60);
  return hours === 1 ? 'an hour' : `about ${hours} hours`;
}

const DATE_TIME = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

/** An ISO-8601 instant as "23 Nov 2026, 13:43 UTC" (the server cannot know the reader's zone). */
export function formatInstant(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${DATE_TIME.format(date)} UTC`;
}

const EVENT_LABELS: Record<string, string> = {
  'account.registered': 'Account created',
  'email.verified': 'E-mail address confirmed',
  'login.succeeded': 'Signed in',
  'login.failed': 'Failed sign-in attempt',
  'login.locked': 'Sign-in blocked after too many failures',
  logout: 'Signed out',
  'session.revoked': 'Session signed out',
  'password.changed': 'Password changed',
  'password.reset': 'Password reset by e-mail',
  'api_key.rotated': 'API key rotated',
  'email.change_requested': 'E-mail change requested',
  'email.changed': 'E-mail address changed',
  'email.change_cancelled': 'E-mail change cancelled',
  'profile.updated': 'Name or company changed',
  'account.deleted': 'Account deleted',
  'site.created': 'Checkout site added',
  'site.updated': 'Checkout site changed',
  'site.deleted': 'Checkout site removed',
  'channel.created': 'Chat channel added',
  'channel.updated': 'Chat channel changed',
  'channel.deleted': 'Chat channel removed',
  'mfa.enabled': 'Authenticator app turned on',
  'mfa.disabled': 'Authenticator app turned off',
  'passkey.added': 'Passkey added',
  'passkey.removed': 'Passkey removed',
  'recovery_codes.regenerated': 'New recovery codes made',
  'recovery_code.used': 'Recovery code used',
  'login.mfa_required': 'Password accepted; second step asked for',
  'login.mfa_failed': 'Wrong second-step code',
  'login.oauth': 'Signed in with an identity provider',
  'identity.linked': 'Identity provider connected',
  'identity.unlinked': 'Identity provider disconnected',
};

/** An activity event as a sentence fragment; operators' events keep their code. */
export function eventLabel(event: string): string {
  return EVENT_LABELS[event] ?? event;
}

/**
 * A procedure's validation message ("must be at least 8 characters") under the field's label
 * ("Password must be at least 8 characters."); an empty field just needs filling in.
 */
export function fieldMessage(label: string, message: string, submitted: string): string {
  if (submitted === '') return `Enter your ${label.toLowerCase()}.`;
  const sentence = `${label} ${message}`;
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}
