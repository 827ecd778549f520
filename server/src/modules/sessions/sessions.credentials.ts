import type { Credentials } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { isUuid } from '../../lib/text.ts';
import { accountByApiKeyHash, accountById, accountByPreviousApiKeyHash, apiKeyPlace, type AccountRow } from '../accounts/index.ts';
import { apiKeyLookupHashes } from '../keys/index.ts';
import { apiKeyCacheKey, authCacheOf, sessionCacheKey } from './sessions.cache.ts';
import { sessionTouchesOf } from './sessions.touches.ts';
import { liveSession } from './sessions.repo.ts';
import type { AuthContext, CachedAuth, SessionSignIn } from './sessions.types.ts';

const API_KEY_PATTERN = /^[0-9a-fA-F]{64}$/;

function isApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}

/**
 * Who is calling, or undefined. Never throws for a bad credential: that is a 401, not a 500.
 * A repeat caller is answered from the /me cache (see sessions.cache.ts for why that is safe);
 * the JWT itself is still verified on every request.
 */
export async function authenticate(deps: Deps, credentials: Credentials): Promise<AuthContext | undefined> {
  const value = credentials.bearer ?? credentials.cookie;
  if (!value) return undefined;
  if (credentials.bearer && isApiKey(value)) {
    const found = await accountByApiKey(deps, value);
    if (!found) return undefined;
    // A replaced key is told only itself: whoever holds it may have leaked it.
    if (found.previousKey) return { account: found.account, apiKey: value.toLowerCase(), replacedKey: true };
    return { account: found.account, apiKey: value.toLowerCase() };
  }
  const claims = await deps.jwt.verify(value);
  if (!claims || !isUuid(claims.sessionId)) return undefined;
  const found = await accountBySession(deps, claims.sessionId, claims.accountId);
  if (!found) return undefined;
  // After the idle check: a request must not keep alive the session it is refused on.
  sessionTouchesOf(deps).touch(claims.sessionId);
  return { account: found.account, apiKey: currentApiKey(deps, found.account), sessionId: claims.sessionId, signIn: found.signIn };
}

/**
 * API keys opened from the account rows that sealed them. A row read from the cache is the
 * same object on every request, and opening its key (AES-GCM) cost a JWT's /me about a tenth
 * of its CPU. Keyed by the row itself, an entry can never outlive what it was opened from: a
 * rotated key, a re-encryption or a deleted account comes with a new row (or none), and an
 * entry goes when its row is collected. Nothing is kept that the row does not already give
 * anyone holding DATA_KEY.
 */
const openedApiKeys = new WeakMap<AccountRow, string>();

function currentApiKey(deps: Deps, account: AccountRow): string {
  let apiKey = openedApiKeys.get(account);
  if (apiKey === undefined) {
    apiKey = deps.secretBox.open(account.api_key_sealed, apiKeyPlace(account.id));
    openedApiKeys.set(account, apiKey);
  }
  return apiKey;
}

/**
 * The account by its current key, else by the key a rotation replaced while its grace
 * window lasts (the cache keeps such an entry no longer than the window).
 */
async function accountByApiKey(deps: Deps, apiKey: string): Promise<CachedAuth | undefined> {
  const authCache = authCacheOf(deps);
  const key = apiKeyCacheKey(apiKey);
  const cached = authCache.get(key);
  if (cached) return cached;
  const epoch = authCache.epoch;
  const hashes = apiKeyLookupHashes(deps, apiKey);
  const account = await accountByApiKeyHash(deps.db, hashes);
  if (account) {
    authCache.set(key, { account }, epoch);
    return { account };
  }
  const previous = await accountByPreviousApiKeyHash(deps.db, hashes, deps.clock.now());
  if (!previous) return undefined;
  const { api_key_previous_until: validUntil, ...row } = previous;
  const found = { account: row, validUntil, previousKey: true as const };
  authCache.set(key, found, epoch);
  return found;
}

/**
 * Whether a session has gone unused for SESSION_IDLE_TIMEOUT: by the later of its last use
 * as stored and a use noted here and not written yet. Memory only: it runs on every request.
 */
export function sessionIdle(deps: Deps, sessionId: string, storedLastUse: Date): boolean {
  const timeoutMs = deps.config.sessionIdleTimeoutSeconds * 1000;
  if (!timeoutMs) return false;
  const lastUse = Math.max(storedLastUse.getTime(), sessionTouchesOf(deps).pending(sessionId)?.getTime() ?? 0);
  return deps.clock.now().getTime() - lastUse >= timeoutMs;
}

/** The account of a live session, and how the session began. */
async function accountBySession(deps: Deps, sessionId: string, accountId: number): Promise<{ account: AccountRow; signIn: SessionSignIn } | undefined> {
  const authCache = authCacheOf(deps);
  const key = sessionCacheKey(sessionId);
  const cached = authCache.get(key);
  // The cache expires the entry with the session; the token's own `sub` must still match.
  // An entry that looks idle is asked of the database again: another instance, or this
  // one's last flush, may have written a later use than the entry holds.
  if (cached?.account.id === accountId && cached.lastUsedAt && cached.signIn && !sessionIdle(deps, sessionId, cached.lastUsedAt)) {
    return { account: cached.account, signIn: cached.signIn };
  }
  const epoch = authCache.epoch;
  const session = await liveSession(deps.db, sessionId, accountId, deps.clock.now());
  if (!session) return undefined;
  const { expires_at: validUntil, last_used_at: lastUsedAt, via, second_step: secondStep } = session;
  if (sessionIdle(deps, sessionId, lastUsedAt)) return undefined;
  const account = await accountById(deps.db, accountId);
  if (!account) return undefined;
  // Shared by every request the cache answers, as the account is.
  const signIn = Object.freeze({ via, secondStep });
  authCache.set(key, { account, validUntil, lastUsedAt, signIn }, epoch);
  return { account, signIn };
}
