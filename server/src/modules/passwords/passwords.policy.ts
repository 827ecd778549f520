import { createHash } from 'node:crypto';
import { dictionary } from '@zxcvbn-ts/language-common';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';

/** Shorter pieces of an address or a name are too common in passwords to refuse. */
const MIN_PERSONAL_LENGTH = 4;
const BREACH_CHECK_TIMEOUT_MS = 2000;

export type PasswordOwner = {
  email: string;
  name: string;
  /** The body field the password came in, which the issue names. */
  field: string;
};

let commonPasswords: Set<string> | undefined;

/**
 * zxcvbn's ranked list of 49,233 common passwords (the 10,000 most common and more), folded
 * into a Set on the first password set rather than at start: a worker never needs it.
 */
function isCommon(folded: string): boolean {
  commonPasswords ??= new Set(dictionary['passwords-common'].map((password) => password.normalize('NFC').toLowerCase()));
  return commonPasswords.has(folded);
}

/**
 * The name and the address's local part: what a password must not contain. Not each word of
 * the name: "Test User" would then refuse every password with "user" in it, which guards
 * nothing an attacker would try first.
 */
function personalWords(owner: PasswordOwner): string[] {
  const name = owner.name.normalize('NFC').toLowerCase().trim();
  const email = owner.email.normalize('NFC').toLowerCase();
  const localPart = email.slice(0, email.lastIndexOf('@'));
  return [name, localPart].filter((word) => word.length >= MIN_PERSONAL_LENGTH);
}

/**
 * The k-anonymity range API (api.pwnedpasswords.com's): only the first 5 hex characters of
 * the SHA-1 leave the machine, and padding hides how many suffixes share them. Any failure,
 * a timeout included, allows the password: an outage there must not stop people here.
 */
async function isBreached(deps: Pick<Deps, 'config' | 'logger'>, password: string): Promise<boolean> {
  const digest = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
  try {
    const response = await fetch(`${deps.config.hibpApiUrl}/range/${digest.slice(0, 5)}`, {
      headers: { 'Add-Padding': 'true' },
      signal: AbortSignal.timeout(BREACH_CHECK_TIMEOUT_MS),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`the range API answered ${response.status}`);
    }
    const suffix = digest.slice(5);
    return (await response.text()).split('\n').some((line) => {
      const [candidate, count] = line.trim().split(':');
      return candidate?.toUpperCase() === suffix && Number(count) > 0;
    });
  } catch (error) {
    // The error names no hash or prefix: fetch's messages carry neither, nor does ours.
    deps.logger.warn({ err: error }, 'breached-password check failed; the password was allowed');
    return false;
  }
}

function refuse(field: string, message: string): never {
  throw new AppError('VALIDATION_FAILED', undefined, { issues: [{ path: field, message }] });
}

/**
 * A password being set (registration, reset, change) must not be a common one, contain the
 * owner's address or name, or, with BREACHED_PASSWORD_CHECK=hibp, be in a known breach.
 * Passwords set before are never checked again: login does not call this.
 *
 * The list is matched against the whole password, as zxcvbn's dictionary match does:
 * "password1" is refused, "password1 on a horse" is not. Checking substrings would refuse
 * long passphrases for an ordinary word inside them.
 */
export async function checkNewPassword(deps: Pick<Deps, 'config' | 'logger'>, password: string, owner: PasswordOwner): Promise<void> {
  const folded = password.normalize('NFC').toLowerCase();
  if (isCommon(folded)) refuse(owner.field, 'is one of the most common passwords: choose another');
  if (personalWords(owner).some((word) => folded.includes(word))) refuse(owner.field, 'must not contain your e-mail address or name');
  if (deps.config.breachedPasswordCheck === 'hibp' && (await isBreached(deps, password.normalize('NFC')))) {
    refuse(owner.field, 'appears in a known data breach: choose another');
  }
}
