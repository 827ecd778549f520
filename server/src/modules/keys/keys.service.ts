import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { randomHex } from '../../lib/crypto.ts';
import { apiKeyPlace, replaceApiKey } from '../accounts/index.ts';
import { recordEvent } from '../activity/index.ts';
import { emitSecurityChange } from '../events/index.ts';
import { requireStepUp, type Proof } from '../mfa/index.ts';
import type { AuthContext } from '../sessions/index.ts';
import { apiKeyRotatedNotice } from './keys.mails.ts';
import { apiKeyHash } from './keys.storage.ts';
import { forgetCachedAccount } from '../sessions/index.ts';

/**
 * A new API key, returned once here and by login and /me from now on. With a grace window
 * the previous key keeps working until it ends, on every instance (its lookup hash is kept
 * that long, never its ciphertext); without one it stops at once. A key still in an earlier
 * window is dropped: at most two keys work at any time. A call made with the previous key
 * is never told the new one, and cannot rotate (403): it may be the leaked key.
 */
export async function rotateApiKey(deps: Deps, auth: AuthContext, input: { grace_seconds?: number } & Proof, request: RequestInfo) {
  if (auth.replacedKey) throw new AppError('FORBIDDEN', 'This API key was replaced: it works until its grace period ends, but cannot rotate the key.');
  await requireStepUp(deps, auth, input, request);
  const graceSeconds = input.grace_seconds ?? 0;
  const apiKey = randomHex(32);
  const now = deps.clock.now();
  const previousUntil = graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : undefined;
  await deps.db.transaction(async (tx) => {
    const key = { hash: apiKeyHash(deps, apiKey), sealed: deps.secretBox.seal(apiKey, apiKeyPlace(auth.account.id)), previousUntil };
    await replaceApiKey(tx, auth.account.id, key, now);
    await recordEvent(tx, deps.clock, 'api_key.rotated', { accountId: auth.account.id }, request, { grace_seconds: graceSeconds });
    await emitSecurityChange(tx, deps.clock, auth.account.id, 'api_key');
  });
  forgetCachedAccount(deps, auth.account.id);
  deps.mailer.sendInBackground(apiKeyRotatedNotice(auth.account.email, auth.account.name, previousUntil));
  return { success: true as const, api_key: apiKey };
}
