import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * OWASP's "device cookies": a browser or client that has logged in to an account before
 * holds a token saying so, signed by us. Its login attempts are limited per device instead of
 * by the account-wide cap, so strangers failing on purpose cannot lock the owner out.
 */
export const DEVICE_TTL_SECONDS = 365 * 24 * 3600;

export type Device = { accountId: number; id: string };

const PATTERN = /^d1\.([1-9][0-9]{0,9})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

const mac = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest();

/** `d1.<account id>.<random id>.<HMAC of the rest>`, signed with the first key; nothing stored server-side. */
export function issueDeviceToken(keys: Buffer[], accountId: number): string {
  const payload = `d1.${accountId}.${randomBytes(16).toString('base64url')}`;
  return `${payload}.${mac(keys[0], payload).toString('base64url')}`;
}

/** The device a token names, or undefined for anything none of the keys (DATA_KEY rotation) signed. */
export function readDeviceToken(keys: Buffer[], token: string | undefined): Device | undefined {
  const match = token ? PATTERN.exec(token) : null;
  if (!match) return undefined;
  const presented = Buffer.from(match[3], 'base64url');
  const signed = keys.some((key) => {
    const expected = mac(key, `d1.${match[1]}.${match[2]}`);
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  });
  return signed ? { accountId: Number(match[1]), id: match[2] } : undefined;
}
