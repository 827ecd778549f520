import type { Credentials } from '../../context.ts';
import type { Deps } from '../../deps.ts';
import { keyedHash } from '../../lib/crypto.ts';
import { apiKeyCacheKey, sessionCacheKey } from './auth.cache.ts';
import type { User } from './auth.schemas.ts';
import { isUuid } from '../../lib/text.ts';

export type AccountRow = {
  id: number;
  email: string;
  name: string;
  company: string | null;
  plan: string;
  role: 'user' | 'admin';
  email_verified: boolean;
  api_key_sealed: string;
  created_at: Date;
};

export type AuthContext = { account: AccountRow; apiKey: string; sessionId?: string; via: 'api_key' | 'jwt' };

export const ACCOUNT_COLUMNS = 'a.id, a.email, a.name, a.company, a.plan, a.role, a.email_verified, a.api_key_sealed, a.created_at';

// Named statements are prepared once per connection: this is the hot path of every request.
const BY_API_KEY = {
  name: 'auth_by_api_key',
  text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE a.api_key_hash = $1`,
};
const BY_SESSION = {
  name: 'auth_by_session',
  text: `SELECT ${ACCOUNT_COLUMNS}, s.expires_at AS session_expires_at FROM sessions s JOIN accounts a ON a.id = s.account_id
         WHERE s.id = $1 AND s.account_id = $2 AND s.revoked_at IS NULL AND s.expires_at > $3`,
};

const API_KEY_PATTERN = /^[0-9a-fA-F]{64}$/;

export function isApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}

export function apiKeyHash(deps: Pick<Deps, 'apiKeyHashKey'>, apiKey: string): Buffer {
  return keyedHash(deps.apiKeyHashKey, apiKey.toLowerCase());
}

/**
 * Who is calling, or undefined. Never throws for a bad credential: that is a 401, not a 500.
 * A repeat caller is answered from deps.authCache (see auth.cache.ts for why that is safe);
 * the JWT itself is still verified on every request.
 */
export async function authenticate(deps: Deps, credentials: Credentials): Promise<AuthContext | undefined> {
  const value = credentials.bearer ?? credentials.cookie;
  if (!value) return undefined;
  if (credentials.bearer && isApiKey(value)) {
    const account = await accountByApiKey(deps, value);
    return account && { account, apiKey: value.toLowerCase(), via: 'api_key' };
  }
  const claims = await deps.jwt.verify(value);
  if (!claims || !isUuid(claims.sessionId)) return undefined;
  const account = await accountBySession(deps, claims.sessionId, claims.accountId);
  if (!account) return undefined;
  return { account, apiKey: deps.secretBox.open(account.api_key_sealed), sessionId: claims.sessionId, via: 'jwt' };
}

async function accountByApiKey(deps: Deps, apiKey: string): Promise<AccountRow | undefined> {
  const { authCache } = deps;
  const key = apiKeyCacheKey(apiKey);
  const cached = authCache.get(key);
  if (cached) return cached.account;
  const epoch = authCache.epoch;
  const [account] = await deps.db.query<AccountRow>(BY_API_KEY, [apiKeyHash(deps, apiKey)]);
  if (account) authCache.set(key, { account }, epoch);
  return account;
}

type SessionRow = AccountRow & { session_expires_at: Date };

async function accountBySession(deps: Deps, sessionId: string, accountId: number): Promise<AccountRow | undefined> {
  const { authCache } = deps;
  const key = sessionCacheKey(sessionId);
  const cached = authCache.get(key);
  // The cache expires the entry with the session; the token's own `sub` must still match.
  if (cached?.account.id === accountId) return cached.account;
  const epoch = authCache.epoch;
  const [row] = await deps.db.query<SessionRow>(BY_SESSION, [sessionId, accountId, deps.clock.now()]);
  if (!row) return undefined;
  const { session_expires_at: sessionExpiresAt, ...account } = row;
  authCache.set(key, { account, sessionExpiresAt }, epoch);
  return account;
}

export function toUser(account: AccountRow, apiKey: string): User {
  return {
    id: account.id,
    email: account.email,
    name: account.name,
    company: account.company,
    plan: account.plan,
    role: account.role,
    api_key: apiKey,
    email_verified: account.email_verified,
    created_at: account.created_at.toISOString(),
  };
}
