import type { Queryable } from '../../lib/db.ts';
import { ACCOUNT_COLUMNS, type AccountRow } from './accounts.profile.ts';

// The credentials an account row holds, its password hash and API key hashes, as the modules
// that handle them read and write them (sessions/, passwords/, keys/): the statements on
// `accounts` stay in this module.

// Named statements are prepared once per connection: this is the hot path of every request.
const BY_API_KEY = {
  name: 'auth_by_api_key',
  text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE a.api_key_hash = ANY($1::bytea[])`,
};
const BY_PREVIOUS_API_KEY = {
  name: 'auth_by_previous_api_key',
  text: `SELECT ${ACCOUNT_COLUMNS}, a.api_key_previous_until FROM accounts a WHERE a.api_key_previous_hash = ANY($1::bytea[]) AND a.api_key_previous_until > $2`,
};

/** The account whose current API key is stored under one of these lookup hashes. */
export async function accountByApiKeyHash(db: Queryable, hashes: Buffer[]): Promise<AccountRow | undefined> {
  const [account] = await db.query<AccountRow>(BY_API_KEY, [hashes]);
  return account;
}

/** The account whose previous API key is stored under one of these hashes and still in its grace window at `now`. */
export async function accountByPreviousApiKeyHash(db: Queryable, hashes: Buffer[], now: Date): Promise<(AccountRow & { api_key_previous_until: Date }) | undefined> {
  const [previous] = await db.query<AccountRow & { api_key_previous_until: Date }>(BY_PREVIOUS_API_KEY, [hashes, now]);
  return previous;
}

/** An account with the hash a password sign-in checks; null for an account made through an identity provider. */
export async function accountForLogin(db: Queryable, email: string): Promise<(AccountRow & { password_hash: string | null }) | undefined> {
  const [account] = await db.query<AccountRow & { password_hash: string | null }>(
    { name: 'auth_login_account', text: `SELECT ${ACCOUNT_COLUMNS}, a.password_hash FROM accounts a WHERE a.email = $1` },
    [email],
  );
  return account;
}

/** The account's password hash; null when it has no password, undefined when there is no such account. */
export async function passwordHashOf(db: Queryable, accountId: number): Promise<string | null | undefined> {
  const [row] = await db.query<{ password_hash: string | null }>('SELECT password_hash FROM accounts WHERE id = $1', [accountId]);
  return row?.password_hash;
}

export async function setPasswordHash(db: Queryable, accountId: number, passwordHash: string, now: Date): Promise<void> {
  await db.query('UPDATE accounts SET password_hash = $2, updated_at = $3 WHERE id = $1', [accountId, passwordHash, now]);
}

/** A password set by a mailed link: the address counts as verified, as the mail arrived. */
export async function setPasswordHashByMail(db: Queryable, accountId: number, passwordHash: string, now: Date): Promise<{ email: string; name: string }> {
  const [row] = await db.query<{ email: string; name: string }>(
    'UPDATE accounts SET password_hash = $2, email_verified = true, updated_at = $3 WHERE id = $1 RETURNING email, name',
    [accountId, passwordHash, now],
  );
  return row;
}

/**
 * A new API key, hashed and sealed by keys/. With `previousUntil` the key it replaces keeps
 * its lookup hash until then; without, it goes at once, and so does any key still in an
 * earlier window.
 */
export async function replaceApiKey(db: Queryable, accountId: number, key: { hash: Buffer; sealed: string; previousUntil: Date | undefined }, now: Date): Promise<void> {
  await db.query(
    `UPDATE accounts SET api_key_previous_hash = CASE WHEN $4::timestamptz IS NULL THEN NULL ELSE api_key_hash END,
       api_key_previous_until = $4, api_key_hash = $2, api_key_sealed = $3, updated_at = $5
     WHERE id = $1`,
    [accountId, key.hash, key.sealed, key.previousUntil ?? null, now],
  );
}

/** Previous API keys whose window ended by `now` lose their lookup hash. Returns how many. */
export async function dropPreviousApiKeysUntil(db: Queryable, now: Date): Promise<number> {
  const rows = await db.query(
    `UPDATE accounts SET api_key_previous_hash = NULL, api_key_previous_until = NULL
     WHERE api_key_previous_until <= $1 RETURNING id`,
    [now],
  );
  return rows.length;
}
