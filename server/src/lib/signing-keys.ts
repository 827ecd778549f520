import { createPrivateKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';

// The private keys that sign access tokens, as ACCESS_TOKEN_KEYS gives them: read here with
// node:crypto alone, so that reading the configuration loads no JOSE library (the CLI reads it
// before anything else). lib/access-tokens.ts signs with them.

/** The JWS algorithms a key's type gives: Ed25519 signs with EdDSA, P-256 with ES256. */
export type SigningAlgorithm = 'EdDSA' | 'ES256';

/**
 * A private key that signs access tokens, with the algorithm its type gives. A KeyObject
 * shows nothing of its key when logged or serialised (`{}`), so a configuration holding it
 * can be printed without giving the key away.
 */
export type SigningKey = { alg: SigningAlgorithm; privateKey: KeyObject };

/** A PKCS#8 PEM or a flat JSON object (a JWK), then a comma or the end. */
const ITEM = /\s*(?:(-----BEGIN PRIVATE KEY-----[\s\S]*?-----END PRIVATE KEY-----)|(\{[^{}]*\}))\s*(?:,|$)/y;

const UNSUPPORTED = 'only Ed25519 (EdDSA) and P-256 (ES256) keys sign access tokens';

/** The algorithm a key of this type signs with, or undefined for any other type. */
function algorithmOf(key: KeyObject): SigningAlgorithm | undefined {
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  return undefined;
}

/** One private JWK, or the reason it is none; the reason never quotes the key. */
function keyOfJwk(text: string): SigningKey | string {
  let jwk: JsonWebKey & { alg?: unknown };
  try {
    jwk = JSON.parse(text);
  } catch {
    return 'is not a JSON object (a JWK)';
  }
  if (typeof jwk.d !== 'string') return 'is a public key or no key at all: give the private JWK (with "d")';
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
  } catch {
    return `is not a private key Node.js can read (kty ${String(jwk.kty)}); ${UNSUPPORTED}`;
  }
  const alg = algorithmOf(privateKey);
  if (!alg) return `is a ${String(jwk.kty)} key${jwk.crv ? ` on ${String(jwk.crv)}` : ''}: ${UNSUPPORTED}`;
  if (jwk.alg !== undefined && jwk.alg !== alg) return `says "alg": ${JSON.stringify(jwk.alg)}, but its type signs with ${alg}`;
  return { alg, privateKey };
}

function keyOfPem(text: string): SigningKey | string {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: text, format: 'pem' });
  } catch {
    return 'is not a PKCS#8 private key Node.js can read';
  }
  const alg = algorithmOf(privateKey);
  return alg ? { alg, privateKey } : `is a ${privateKey.asymmetricKeyType} key: ${UNSUPPORTED}`;
}

/**
 * ACCESS_TOKEN_KEYS: private JWKs (flat JSON objects) or PKCS#8 PEMs, separated by commas, in
 * the order given (the first signs). A PEM's line breaks may be written `\n`, as a one-line
 * variable needs them. The reason for a refusal names the key by its place, never its text.
 */
export function parseSigningKeys(text: string): { keys: SigningKey[] } | { problem: string } {
  const source = text.replace(/\\n/g, '\n').trim();
  const keys: SigningKey[] = [];
  ITEM.lastIndex = 0;
  while (ITEM.lastIndex < source.length) {
    const match = ITEM.exec(source);
    const place = `key ${keys.length + 1}`;
    if (!match) return { problem: `${place} is neither a private JWK ({…}) nor a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----…)` };
    const key = match[1] ? keyOfPem(match[1]) : keyOfJwk(match[2]);
    if (typeof key === 'string') return { problem: `${place} ${key}` };
    keys.push(key);
  }
  return keys.length ? { keys } : { problem: 'must hold at least one key' };
}

/** A new private key as a JWK with its `alg`: what `tokens keygen` prints and development starts keep. */
export function generateSigningKey(alg: SigningAlgorithm = 'EdDSA'): JsonWebKey & { alg: SigningAlgorithm } {
  const { privateKey } = alg === 'EdDSA' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...privateKey.export({ format: 'jwk' }), alg };
}
