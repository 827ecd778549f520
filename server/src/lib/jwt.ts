import { webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify, errors } from 'jose';
import type { Clock } from './clock.ts';

export type SessionClaims = { accountId: number; sessionId: string; expiresAt: Date };

const VERIFIED_TOKENS_MAX = 10_000;

/**
 * A session sends the same token on every request, and WebCrypto's HMAC (a thread-pool job
 * per call) costs more than the rest of /me. A token's signature and claims never change, so
 * they are checked once and kept (a bounded number, oldest out first); the caller still
 * checks expiry on every use, and revocation is its session lookup.
 */
function createVerifiedTokens() {
  const verified = new Map<string, SessionClaims>();
  return {
    get: (token: string) => verified.get(token),
    add(token: string, claims: SessionClaims) {
      if (verified.size >= VERIFIED_TOKENS_MAX) verified.delete(verified.keys().next().value!);
      verified.set(token, claims);
    },
  };
}

const isExpired = (claims: SessionClaims, now: Date) => claims.expiresAt.getTime() / 1000 <= Math.floor(now.getTime() / 1000);

export interface JwtSigner {
  sign(claims: { accountId: number; sessionId: string }): Promise<{ token: string; expiresAt: Date }>;
  /** Undefined for anything that is not a valid, unexpired HS256 token from this issuer. */
  verify(token: string): Promise<SessionClaims | undefined>;
}

/** The key is imported once as a CryptoKey: jose re-imports raw bytes on every call. */
export async function createJwtSigner(options: {
  secret: Buffer;
  issuer: string;
  ttlSeconds: number;
  clock: Clock;
}): Promise<JwtSigner> {
  const { issuer, ttlSeconds, clock } = options;
  const key = await webcrypto.subtle.importKey('raw', options.secret, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
  const verified = createVerifiedTokens();
  return {
    async sign({ accountId, sessionId }) {
      const issuedAt = Math.floor(clock.now().getTime() / 1000);
      const expiresAt = issuedAt + ttlSeconds;
      const token = await new SignJWT({ sid: sessionId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(String(accountId))
        .setIssuer(issuer)
        .setIssuedAt(issuedAt)
        .setExpirationTime(expiresAt)
        .sign(key);
      return { token, expiresAt: new Date(expiresAt * 1000) };
    },
    async verify(token) {
      const known = verified.get(token);
      if (known) return isExpired(known, clock.now()) ? undefined : known;
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: ['HS256'],
          issuer,
          currentDate: clock.now(),
          requiredClaims: ['sub', 'sid', 'iat', 'exp'],
        });
        const accountId = Number(payload.sub);
        if (!Number.isSafeInteger(accountId) || accountId <= 0 || typeof payload.sid !== 'string') return undefined;
        const claims = Object.freeze({ accountId, sessionId: payload.sid, expiresAt: new Date(payload.exp! * 1000) });
        // Only `exp` is checked again on reuse, so a token with `nbf` (we never set one) is not kept.
        if (payload.nbf === undefined) verified.add(token, claims);
        return claims;
      } catch (error) {
        if (error instanceof errors.JOSEError || error instanceof TypeError) return undefined;
        throw error;
      }
    },
  };
}
