import { createHmac, randomBytes } from 'node:crypto';
import type { SealedPlace } from '../../lib/crypto.ts';

// The Standard Webhooks scheme (https://www.standardwebhooks.com): what a receiver checks
// with the `standardwebhooks` package.

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 24;

/** A new signing secret: `whsec_` + base64 of 24 random bytes. */
export const newSecret = () => SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');

/** Where an endpoint's secrets are sealed: they open only there. */
export const secretPlace = (endpointId: string): SealedPlace => ({ column: 'event_endpoints.secret_sealed', row: endpointId });
export const previousSecretPlace = (endpointId: string): SealedPlace => ({ column: 'event_endpoints.previous_secret_sealed', row: endpointId });

/** The bytes a secret stands for: the base64 after `whsec_`. */
const keyOf = (secret: string) => Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');

/**
 * The headers of one attempt. `webhook-signature` holds one `v1,<base64 HMAC-SHA256>` of
 * `id.timestamp.body` per secret, space-separated: during a rotation's grace both sign, and
 * a receiver that knows either accepts.
 */
export function signedHeaders(id: string, timestamp: Date, body: string, secrets: string[]): Record<string, string> {
  const seconds = Math.floor(timestamp.getTime() / 1000).toString();
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${seconds}.${body}`).digest('base64')}`);
  return { 'webhook-id': id, 'webhook-timestamp': seconds, 'webhook-signature': signatures.join(' ') };
}
