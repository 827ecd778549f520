import type { RequestInfo } from '../../trpc/context.ts';
import type { Deps } from '../../deps.ts';
import { randomHex } from '../../lib/crypto.ts';
import type { Queryable } from '../../lib/db.ts';
import { recordEvent } from './auth.audit.ts';
import { apiKeyHash, apiKeyPlace } from './auth.credentials.ts';
import { apiKeyRotatedNotice } from './auth.mails.ts';
import type { AuthContext } from './auth.types.ts';
import { requireStepUp, type Proof } from '../mfa/index.ts';

/**
 * A new API key, returned once here and by login and /me from now on. With a grace window
 * the previous key keeps working until it ends, on every instance (its lookup hash is kept
 * that long, never its ciphertext); without one it stops at once. A key still in an earlier
 * window is dropped: at most two keys work at any time.
 */
export async function rotateApiKey(deps: Deps, auth: AuthContext, input: { grace_seconds?: number } & Proof, request: RequestInfo) {
  await requireStepUp(deps, auth, input, request);
  const graceSeconds = input.grace_seconds ?? 0;
  const apiKey = randomHex(32);
  const now = deps.clock.now();
  const previousUntil = graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : undefined;
  await deps.db.transaction(async (tx) => {
    await tx.query(
      `UPDATE accounts SET api_key_previous_hash = CASE WHEN $4::timestamptz IS NULL THEN NULL ELSE api_key_hash END,
         api_key_previous_until = $4, api_key_hash = $2, api_key_sealed = $3, updated_at = $5
       WHERE id = $1`,
      [auth.account.id, apiKeyHash(deps, apiKey), deps.secretBox.seal(apiKey, apiKeyPlace(auth.account.id)), previousUntil ?? null, now],
    );
    await recordEvent(tx, deps.clock, 'api_key.rotated', { accountId: auth.account.id }, request, { grace_seconds: graceSeconds });
  });
  deps.authCache.evictAccount(auth.account.id);
  deps.mailer.sendInBackground(apiKeyRotatedNotice(auth.account.email, auth.account.name, previousUntil));
  return { success: true as const, api_key: apiKey };
}

/** Housekeeping: previous keys whose window has ended lose their lookup hash. Returns how many. */
export async function dropExpiredPreviousKeys(db: Queryable, now: Date): Promise<number> {
  const rows = await db.query(
    `UPDATE accounts SET api_key_previous_hash = NULL, api_key_previous_until = NULL
     WHERE api_key_previous_until <= $1 RETURNING id`,
    [now],
  );
  return rows.length;
}
