import { createPrivateKey, createPublicKey, randomUUID, type webcrypto } from 'node:crypto';
import { calculateJwkThumbprint, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import type { Clock } from './clock.ts';
import { generateSigningKey, type SigningAlgorithm, type SigningKey } from './signing-keys.ts';

/** A key as the JWKS publishes it: its public half only, named by its RFC 7638 thumbprint. */
export type PublishedKey = { kty: string; crv: string; x: string; y?: string; kid: string; alg: SigningAlgorithm; use: 'sig' };

/** What a token says beyond what every token says (`iss`, `iat`, `exp`, `jti`). */
export type AccessTokenClaims = JWTPayload & { sub: string; aud: string };

export interface AccessTokenSigner {
  /** The JSON Web Key Set: every key's public half, the signing key first; `{keys: []}` without keys. */
  readonly jwks: { readonly keys: readonly PublishedKey[] };
  /** How long a token lives, in seconds. */
  readonly ttlSeconds: number;
  /** Whether there is a key to sign with. */
  readonly canSign: boolean;
  /** A signed token (RFC 9068: `typ: at+jwt`) with these claims, issued now. */
  sign(claims: AccessTokenClaims): Promise<string>;
}

type Signing = { kid: string; alg: SigningAlgorithm; key: webcrypto.CryptoKey };

/** A key's public half, as a JWK of its own members only (no `d`, no `ext` or `key_ops`). */
function publicJwkOf(key: SigningKey): Omit<PublishedKey, 'kid' | 'alg' | 'use'> {
  const { kty, crv, x, y } = createPublicKey(key.privateKey).export({ format: 'jwk' }) as Required<JWK>;
  return y === undefined ? { kty, crv, x } : { kty, crv, x, y };
}

/**
 * Short-lived tokens for the platform's other services, signed with the first key and
 * checked by them with the public keys `jwks` gives (docs/ACCESS-TOKENS.md). The private keys
 * are imported once, not extractable: nothing built from this signer can hand one out. A
 * key listed twice is published once.
 */
export async function createAccessTokenSigner(options: { keys: SigningKey[]; issuer: string; ttlSeconds: number; clock: Clock }): Promise<AccessTokenSigner> {
  const { issuer, ttlSeconds, clock } = options;
  const published: PublishedKey[] = [];
  let signing: Signing | undefined;
  for (const key of options.keys) {
    const publicJwk = publicJwkOf(key);
    const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
    if (published.some((entry) => entry.kid === kid)) continue;
    published.push(Object.freeze({ ...publicJwk, kid, alg: key.alg, use: 'sig' as const }));
    signing ??= { kid, alg: key.alg, key: (await importJWK(key.privateKey.export({ format: 'jwk' }) as JWK, key.alg, { extractable: false })) as webcrypto.CryptoKey };
  }
  const jwks = Object.freeze({ keys: Object.freeze(published) });
  return {
    jwks,
    ttlSeconds,
    canSign: signing !== undefined,
    async sign(claims) {
      if (!signing) throw new Error('no ACCESS_TOKEN_KEYS to sign access tokens with');
      const issuedAt = Math.floor(clock.now().getTime() / 1000);
      const payload = { ...claims, iss: issuer, iat: issuedAt, exp: issuedAt + ttlSeconds, jti: randomUUID() };
      return new SignJWT(payload).setProtectedHeader({ alg: signing.alg, typ: 'at+jwt', kid: signing.kid }).sign(signing.key);
    },
  };
}

/** A new private key for ACCESS_TOKEN_KEYS (a JWK with its `alg`), and the `kid` the JWKS will name it by. */
export async function newSigningKey(alg: SigningAlgorithm = 'EdDSA'): Promise<{ privateJwk: JWK; kid: string }> {
  const privateJwk = generateSigningKey(alg);
  const kid = await calculateJwkThumbprint(publicJwkOf({ alg, privateKey: createPrivateKey({ key: privateJwk, format: 'jwk' }) }), 'sha256');
  return { privateJwk, kid };
}
