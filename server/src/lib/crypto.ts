import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** Separate keys for separate jobs, all derived from DATA_KEY. */
export function deriveKey(dataKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', dataKey, Buffer.alloc(0), `gatehouse:${purpose}`, 32));
}

/**
 * Where a sealed value lives: its column and the row it belongs to. It is the associated
 * data of the encryption, so a ciphertext copied into another column or row does not open.
 */
export type SealedPlace = { column: string; row: string | number };

export type SecretBox = {
  /** The id of the key that seals: a value whose `keyIdOf` differs awaits `secrets reencrypt`. */
  readonly currentKeyId: string;
  seal(plaintext: string, place: SealedPlace): string;
  /** Throws for a value sealed for another place, under an unknown key, or tampered with. */
  open(sealed: string, place: SealedPlace): string;
};

const FORMAT = 'v2';
const TAG_BYTES = 16;

/** A short, stable name for a key that reveals nothing about it. */
function keyId(key: Buffer): string {
  return createHash('sha256').update('gatehouse:key-id:').update(key).digest('base64url').slice(0, 8);
}

/**
 * AES-256-GCM. The stored form is `v2.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts);
 * the key id says which DATA_KEY sealed it, so several can open values during a rotation.
 * The first key seals.
 */
export function createSecretBox(dataKeys: Buffer[]): SecretBox {
  const keys = dataKeys.map((dataKey) => {
    const key = deriveKey(dataKey, 'secret-box');
    return { id: keyId(key), key };
  });
  const associated = (id: string, place: SealedPlace) => Buffer.from(`${FORMAT}.${id}.${place.column}:${place.row}`);
  return {
    currentKeyId: keys[0].id,
    seal(plaintext, place) {
      const { id, key } = keys[0];
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(associated(id, place));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [FORMAT, id, ...[iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url'))].join('.');
    },
    open(sealed, place) {
      const parts = sealed.split('.');
      const [format, id, iv, tag, body] = parts;
      if (parts.length !== 5 || format !== FORMAT || !iv || !tag) throw new Error('unknown sealed format');
      const match = keys.find((candidate) => candidate.id === id);
      if (!match) throw new Error('sealed under a key that is not configured');
      return decrypt(match.key, iv, tag, body, associated(id, place));
    },
  };
}

/** The id of the key a v2 value was sealed under (it is in the clear), else undefined. */
export function keyIdOf(sealed: string): string | undefined {
  const [format, id] = sealed.split('.');
  return format === FORMAT ? id : undefined;
}

/**
 * The format before v2 (no key id, no associated data), readable only so that migration
 * 0004 can re-seal what it finds.
 */
export function openUnboundV1(dataKey: Buffer, sealed: string): string {
  const parts = sealed.split('.');
  const [version, iv, tag, body] = parts;
  if (parts.length !== 4 || version !== 'v1' || !iv || !tag) throw new Error('not a v1 sealed value');
  return decrypt(deriveKey(dataKey, 'secret-box'), iv, tag, body);
}

/**
 * AES-256-GCM's opening of base64url parts. The tag must be the whole 16 bytes that seal
 * writes: GCM would otherwise take a tag cut to 4 bytes, and a forgery needs only as many
 * tries as the cut tag has values.
 */
function decrypt(key: Buffer, iv: string, tag: string, body: string, associated?: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
  if (associated) decipher.setAAD(associated);
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

export function keyedHash(key: Buffer, value: string): Buffer {
  return createHmac('sha256', key).update(value).digest();
}

export function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function randomHex(bytes = 32): string {
  return randomBytes(bytes).toString('hex');
}

/**
 * Constant-time string equality. Both sides are hashed first so timingSafeEqual always sees
 * 32 bytes: it would throw on a length difference, and an early length check would tell an
 * attacker how long the secret is.
 */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}
