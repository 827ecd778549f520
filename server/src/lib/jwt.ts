import { createHash, webcrypto } from 'node:crypto';
import { SignJWT, decodeProtectedHeader, jwtVerify, errors } from 'jose';
import type { Clock } from './clock.ts';
import { createTtlCache } from './ttl-cache.ts';

export type SessionClaims = { accountId: number; sessionId: string; expiresAt: Date };

/**
 * A session sends the same token on every request, and WebCrypto's HMAC (a thread-pool job
 * per call) costs more than the rest of /me. A token's signature and claims never change, so
 * they are checked once and kept for a while (a bounded number, oldest out first); expiry is
 * still checked on every use, and revocation is the caller's session lookup.
 */
const VERIFIED_TOKENS = { ttlMs: 10 * 60_000, maxEntries: 10_000 };

const isExpired = (claims: SessionClaims, now: Date) => claims.expiresAt.getTime() / 1000 <= Math.floor(now.getTime() / 1000);

export interface JwtSigner {
  sign(claims: { accountId: number; sessionId: string }): Promise<{ token: string; expiresAt: Date }>;
  /** Undefined for anything that is not a valid, unexpired HS256 token from this issuer, for this audience. */
  verify(token: string): Promise<SessionClaims | undefined>;
}

/** A short, stable name for a secret that reveals nothing about it: the JWT's `kid`. */
export function jwtKeyId(secret: Buffer): string {
  return createHash('sha256').update('gatehouse:jwt-kid:').update(secret).digest('base64url').slice(0, 8);
}

type SigningKey = { id: string; key: webcrypto.CryptoKey };

/**
 * The first secret signs, naming itself in the header's `kid`; a token is verified with the
 * secret its `kid` names, so JWT_SECRET rotates without logging anyone out: list the new
 * secret first and keep the old one until the tokens it signed have expired (JWT_TTL).
 * Tokens from before key ids (no `kid`) are tried against every secret.
 * Keys are imported once as CryptoKeys: jose re-imports raw bytes on every call.
 * New tokens name `audience` in `aud`; a token naming another is refused, while one without
 * `aud` (signed before tokens carried it) is accepted until it expires.
 */
export async function createJwtSigner(options: {
  secrets: Buffer[];
  issuer: string;
  audience: string;
  ttlSeconds: number;
  clock: Clock;
}): Promise<JwtSigner> {
  const { issuer, audience, ttlSeconds, clock } = options;
  if (!options.secrets.length) throw new Error('createJwtSigner needs at least one secret');
  const keys: SigningKey[] = await Promise.all(
    options.secrets.map(async (secret) => ({
      id: jwtKeyId(secret),
      key: await webcrypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']),
    })),
  );
  const signing = keys[0];
  const byId = new Map(keys.map((entry) => [entry.id, entry.key]));
  const verified = createTtlCache<SessionClaims>({ clock, ...VERIFIED_TOKENS });
  return {
    async sign({ accountId, sessionId }) {
      const issuedAt = Math.floor(clock.now().getTime() / 1000);
      const expiresAt = issuedAt + ttlSeconds;
      const token = await new SignJWT({ sid: sessionId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: signing.id })
        .setSubject(String(accountId))
        .setIssuer(issuer)
        .setAudience(audience)
        .setIssuedAt(issuedAt)
        .setExpirationTime(expiresAt)
        .sign(signing.key);
      return { token, expiresAt: new Date(expiresAt * 1000) };
    },
    async verify(token) {
      const known = verified.get(token);
      if (known) return isExpired(known, clock.now()) ? undefined : known;
      try {
        const payload = await verifyWithAny(token, keys, byId, { issuer, currentDate: clock.now() });
        if (!payload || (payload.aud !== undefined && payload.aud !== audience)) return undefined;
        const accountId = Number(payload.sub);
        if (!Number.isSafeInteger(accountId) || accountId <= 0 || typeof payload.sid !== 'string') return undefined;
        const claims = Object.freeze({ accountId, sessionId: payload.sid, expiresAt: new Date(payload.exp! * 1000) });
        // Only `exp` is checked again on reuse, so a token with `nbf` (we never set one) is not kept.
        if (payload.nbf === undefined) verified.set(token, claims);
        return claims;
      } catch (error) {
        if (error instanceof errors.JOSEError || error instanceof TypeError) return undefined;
        throw error;
      }
    },
  };
}

/** The payload under the key the header's `kid` names; a token without a `kid`, under any key. */
async function verifyWithAny(token: string, keys: SigningKey[], byId: Map<string, webcrypto.CryptoKey>, checks: { issuer: string; currentDate: Date }) {
  const { kid } = decodeProtectedHeader(token);
  const named = kid === undefined ? undefined : byId.get(kid);
  if (kid !== undefined && !named) return undefined;
  const candidates = named ? [named] : keys.map((entry) => entry.key);
  for (const key of candidates) {
    try {
      return (await jwtVerify(token, key, { algorithms: ['HS256'], requiredClaims: ['sub', 'sid', 'iat', 'exp'], ...checks })).payload;
    } catch (error) {
      // Another key may have signed it; an expired or otherwise invalid token is not retried.
      if (!(error instanceof errors.JWSSignatureVerificationFailed)) throw error;
    }
  }
  return undefined;
}
