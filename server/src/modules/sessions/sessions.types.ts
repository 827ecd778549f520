// The sessions module's shapes, in a file apart: the cache, which deps.ts builds, names them
// without importing anything that names deps.ts.
import type { AccountRow } from '../accounts/index.ts';

/**
 * Who is calling: the account, its API key in plaintext (the one the caller may see), the
 * session when a JWT was used and how it began (`signIn`), and `replacedKey` when the caller used an API key a rotation
 * replaced, still in its grace window: it may go on calling, but is never told the new key,
 * nor may it rotate (a leaked key would otherwise take over its own replacement).
 */
export type AuthContext = { account: AccountRow; apiKey: string; sessionId?: string; signIn?: SessionSignIn; replacedKey?: true };

/** The second factor a sign-in proved: the second factor's own names for its methods. */
export type SecondStep = 'totp' | 'recovery_code' | 'passkey';

/**
 * How the calling session began: its first step (`via`: `password`, `passkey` or a
 * provider's name) and the second factor proved after it, if any. An access token's `amr`.
 */
export type SessionSignIn = { via: string; secondStep: SecondStep | null };

/**
 * An account as found by a credential, with the end of that credential's life when it has
 * one: the session's expiry, or the end of a rotated API key's grace window. `previousKey`:
 * found by the key a rotation replaced (AuthContext.replacedKey). `lastUsedAt`:
 * the session's last use as stored when it was found (SESSION_IDLE_TIMEOUT). `signIn`: how
 * the session began.
 */
export type CachedAuth = { account: AccountRow; validUntil?: Date; previousKey?: true; lastUsedAt?: Date; signIn?: SessionSignIn };
