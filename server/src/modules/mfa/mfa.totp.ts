import { Secret, TOTP } from 'otpauth';

/**
 * RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30 s steps, a 20-byte
 * secret. `otpauth` does the HOTP arithmetic; this file only fixes the parameters and says
 * which step a code belongs to, so that the caller can accept each step once.
 */
const PARAMETERS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
/** The current step and one either side: a phone's clock may be a little off. */
const WINDOW = 1;
const ISSUER = 'Gatehouse';
const CODE = /^\d{6}$/;

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://` URL an app scans: the issuer and the account's address name the entry. */
export function totpUrl(secretBase32: string, accountEmail: string): string {
  return new TOTP({ ...PARAMETERS, issuer: ISSUER, label: accountEmail, secret: Secret.fromBase32(secretBase32) }).toString();
}

/** The step a code is valid for at `now`, or undefined; spaces a person typed are ignored. */
export function totpStepOf(secretBase32: string, code: string, now: Date): number | undefined {
  const token = code.replace(/\s+/g, '');
  if (!CODE.test(token)) return undefined;
  const totp = new TOTP({ ...PARAMETERS, secret: Secret.fromBase32(secretBase32) });
  const timestamp = now.getTime();
  const delta = totp.validate({ token, timestamp, window: WINDOW });
  return delta === null ? undefined : totp.counter({ timestamp }) + delta;
}

/** The code of a step: for tests and for the RFC's own vectors. */
export function totpCodeAt(secretBase32: string, now: Date, digits: number = PARAMETERS.digits): string {
  return new TOTP({ ...PARAMETERS, digits, secret: Secret.fromBase32(secretBase32) }).generate({ timestamp: now.getTime() });
}
