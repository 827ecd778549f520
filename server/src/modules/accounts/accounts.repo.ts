import type { Queryable } from '../../lib/db.ts';
import type { SealedPlace } from '../../lib/crypto.ts';
import { sealedColumn } from '../../lib/sealed-column.ts';
import { ACCOUNT_COLUMNS, type AccountRecord, type AccountRow, type EmailTokenRecord, type UsedToken } from './accounts.model.ts';

// Every statement on the accounts module's tables (accounts.model.ts). Other modules reach
// them through the face (index.ts); the statements on the request path keep a name, so each
// connection prepares them once.

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

type PreviousKeyAccount = AccountRow & { api_key_previous_until: Date };

/** The account whose previous API key is stored under one of these hashes and still in its grace window at `now`. */
export async function accountByPreviousApiKeyHash(db: Queryable, hashes: Buffer[], now: Date): Promise<PreviousKeyAccount | undefined> {
  const [previous] = await db.query<PreviousKeyAccount>(BY_PREVIOUS_API_KEY, [hashes, now]);
  return previous;
}

/** An account with the hash a password sign-in checks; null for an account made through an identity provider. */
export async function accountForLogin(db: Queryable, email: string): Promise<(AccountRow & Pick<AccountRecord, 'password_hash'>) | undefined> {
  const [account] = await db.query<AccountRow & Pick<AccountRecord, 'password_hash'>>(
    { name: 'auth_login_account', text: `SELECT ${ACCOUNT_COLUMNS}, a.password_hash FROM accounts a WHERE a.email = $1` },
    [email],
  );
  return account;
}

export async function accountById(db: Queryable, accountId: number): Promise<AccountRow | undefined> {
  const [account] = await db.query<AccountRow>({ name: 'account_by_id', text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE a.id = $1` }, [accountId]);
  return account;
}

/** The account with this address, as an administrator looks it up. */
export async function accountRowByEmail(db: Queryable, email: string): Promise<AccountRow | undefined> {
  const [account] = await db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE a.email = $1`, [email]);
  return account;
}

/** Every administrator with a verified address: whom an operator's notice goes to. */
export function adminAddresses(db: Queryable): Promise<Array<{ email: string; name: string }>> {
  return db.query<{ email: string; name: string }>("SELECT email, name FROM accounts WHERE role = 'admin' AND email_verified ORDER BY id");
}

/** The account that has this address, if any: whom a mail to it would name. */
export async function accountByEmail(db: Queryable, email: string): Promise<{ id: number; name: string } | undefined> {
  const [account] = await db.query<{ id: number; name: string }>('SELECT id, name FROM accounts WHERE email = $1', [email]);
  return account;
}

export type LockedAccount = Pick<AccountRecord, 'id' | 'email' | 'name' | 'role' | 'email_verified'>;

/** Locks the account's row for the caller's transaction; undefined when there is none. */
export async function lockAccount(tx: Queryable, by: { id: number } | { email: string }): Promise<LockedAccount | undefined> {
  const [account] =
    'id' in by
      ? await tx.query<LockedAccount>('SELECT id, email, name, role, email_verified FROM accounts WHERE id = $1 FOR UPDATE', [by.id])
      : await tx.query<LockedAccount>('SELECT id, email, name, role, email_verified FROM accounts WHERE email = $1 FOR UPDATE', [by.email]);
  return account;
}

/** Locks the rows of these accounts in id order, for a transaction that takes its locks up front. */
export async function lockAccounts(tx: Queryable, ids: number[]): Promise<void> {
  if (ids.length) await tx.query('SELECT id FROM accounts WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE', [ids]);
}

export async function emailIsTaken(db: Queryable, email: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM accounts WHERE email = $1', [email])).length > 0;
}

/** An id for a new account, taken first because its sealed API key is bound to it. */
export async function nextAccountId(tx: Queryable): Promise<number> {
  const [{ id }] = await tx.query<{ id: number }>(`SELECT nextval(pg_get_serial_sequence('accounts', 'id'))::int AS id`);
  return id;
}

type NewAccount = Pick<AccountRecord, 'id' | 'email' | 'password_hash' | 'name' | 'company' | 'email_verified' | 'api_key_hash' | 'api_key_sealed' | 'created_at'>;

/**
 * Inserts the account unless its address is taken; returns its id when it was inserted. A
 * registration's is unverified and has a password; one made through an identity provider is
 * verified and has none.
 */
export async function insertAccount(tx: Queryable, account: NewAccount): Promise<number | undefined> {
  const [created] = await tx.query<{ id: number }>(
    `INSERT INTO accounts (id, email, password_hash, name, company, email_verified, api_key_hash, api_key_sealed, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) ON CONFLICT (email) DO NOTHING RETURNING id`,
    [account.id, account.email, account.password_hash, account.name, account.company, account.email_verified, account.api_key_hash, account.api_key_sealed, account.created_at],
  );
  return created?.id;
}

/** The account of this address, its row locked for the caller's transaction (a sign-in through an identity provider). */
export async function lockAccountRowByEmail(tx: Queryable, email: string): Promise<AccountRow | undefined> {
  const [account] = await tx.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE a.email = $1 FOR UPDATE`, [email]);
  return account;
}

/** Whether the account has a password, its row locked for the caller's transaction; undefined when there is no such account. */
export async function lockAccountPassword(tx: Queryable, accountId: number): Promise<boolean | undefined> {
  const [row] = await tx.query<{ has_password: boolean }>('SELECT password_hash IS NOT NULL AS has_password FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  return row?.has_password;
}

/**
 * Whether the account's password is still the one a sign-in checked, its row then locked
 * (FOR SHARE) until `tx` commits: a reset or change that writes a new password waits for it,
 * and one that came first makes this false. A sign-in writes its session in the same
 * transaction (sessions.issue.ts), so a session started on the old password is either never
 * written or there for the reset to revoke.
 */
export async function lockPasswordIfStill(tx: Queryable, accountId: number, hash: string): Promise<boolean> {
  const rows = await tx.query({ name: 'account_password_still', text: 'SELECT 1 FROM accounts WHERE id = $1 AND password_hash = $2 FOR SHARE' }, [accountId, hash]);
  return rows.length > 0;
}

/** The password goes and the address counts as verified (an identity provider trusted for e-mail proved it). */
export async function clearPasswordAndVerify(tx: Queryable, accountId: number, now: Date): Promise<void> {
  await tx.query('UPDATE accounts SET password_hash = NULL, email_verified = true, updated_at = $2 WHERE id = $1', [accountId, now]);
}

/** Marks the address verified, and takes on the registration a token carried; false when it already was. */
export async function markVerified(tx: Queryable, used: UsedToken, now: Date): Promise<boolean> {
  const changed = await tx.query(
    `UPDATE accounts SET email_verified = true, updated_at = $2,
       password_hash = COALESCE($3, password_hash), name = COALESCE($4, name),
       company = CASE WHEN $3::text IS NULL THEN company ELSE $5 END
     WHERE id = $1 AND NOT email_verified RETURNING id`,
    [used.account_id, now, used.password_hash, used.name, used.company],
  );
  return changed.length > 0;
}

/** The account moves to a new address, verified (its mail arrived). */
export async function setEmail(tx: Queryable, accountId: number, email: string, now: Date): Promise<void> {
  await tx.query('UPDATE accounts SET email = $2, email_verified = true, updated_at = $3 WHERE id = $1', [accountId, email, now]);
}

/** Sets the role unless the account has it already; whether it changed. */
export async function changeRole(tx: Queryable, accountId: number, role: AccountRecord['role'], now: Date): Promise<boolean> {
  return (await tx.query('UPDATE accounts SET role = $2, updated_at = $3 WHERE id = $1 AND role <> $2 RETURNING id', [accountId, role, now])).length > 0;
}

/**
 * The ids of every admin, their rows locked for the caller's transaction: two demotions at
 * once each wait for the other, so the second sees the first and neither leaves no admin.
 */
export async function lockAdmins(tx: Queryable): Promise<number[]> {
  const rows = await tx.query<{ id: number }>("SELECT id FROM accounts WHERE role = 'admin' ORDER BY id FOR UPDATE");
  return rows.map((row) => row.id);
}

/** Notes that ADMIN_EMAILS promoted through this address; false when it already had, once. */
export async function claimAdminEmailPromotion(tx: Queryable, email: string, now: Date): Promise<boolean> {
  const rows = await tx.query('INSERT INTO admin_email_promotions (email, promoted_at) VALUES ($1, $2) ON CONFLICT (email) DO NOTHING RETURNING email', [email, now]);
  return rows.length > 0;
}

export type AccountCounts = { total: number; verified: number; created_since: number };

/**
 * How many accounts there are, with a confirmed address, and made at or after `since`: the
 * first two from the counts a trigger keeps (account_counts), the last a short range of the
 * created_at index, so that none of it reads every account.
 */
export async function accountCounts(db: Queryable, since: Date): Promise<AccountCounts> {
  const [counts] = await db.query<AccountCounts>(
    `SELECT (SELECT coalesce(sum(accounts), 0)::int FROM account_counts) AS total,
            (SELECT coalesce(sum(verified), 0)::int FROM account_counts) AS verified,
            (SELECT count(*)::int FROM accounts WHERE created_at >= $1) AS created_since`,
    [since],
  );
  return counts;
}

/** What the operators' search matches: an address's prefix (normalised, wildcards taken literally), or an id too. */
export type AccountSearch = { emailPrefix?: string; id?: number };

/** `%` and `_` in what an operator typed are themselves, not wildcards. */
const likePrefix = (text: string) => `${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

/**
 * Accounts matching `search` (all without one), newest (highest id) first, below the id
 * `beforeId`. Each filter is a statement of its own, so the planner sees which index serves it.
 */
export function searchAccountRows(db: Queryable, search: AccountSearch, beforeId: number | undefined, limit: number): Promise<AccountRow[]> {
  const before = beforeId ?? 2 ** 31;
  const page = `ORDER BY a.id DESC LIMIT ${Number(limit)}`;
  if (search.emailPrefix === undefined) return db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE a.id < $1::bigint ${page}`, [before]);
  return db.query<AccountRow>(
    `SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE (a.email LIKE $1 OR a.id = $2) AND a.id < $3::bigint ${page}`,
    [likePrefix(search.emailPrefix), search.id ?? null, before],
  );
}

/** The account's row, locked for the caller's transaction, as /me shows it: what a profile change compares with. */
export async function lockAccountRow(tx: Queryable, accountId: number): Promise<AccountRow | undefined> {
  const [account] = await tx.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE a.id = $1 FOR UPDATE`, [accountId]);
  return account;
}

/** A new name and company (null: none); returns the account as it now is. */
export async function setProfile(tx: Queryable, accountId: number, profile: Pick<AccountRecord, 'name' | 'company'>, now: Date): Promise<AccountRow> {
  const [account] = await tx.query<AccountRow>(
    `UPDATE accounts a SET name = $2, company = $3, updated_at = $4 WHERE a.id = $1 RETURNING ${ACCOUNT_COLUMNS}`,
    [accountId, profile.name, profile.company, now],
  );
  return account;
}

/** Sets the account's plan, writing (and notifying) only when it changes; whether it did. */
export async function setPlan(tx: Queryable, accountId: number, plan: string, now: Date): Promise<boolean> {
  return (await tx.query('UPDATE accounts SET plan = $2, updated_at = $3 WHERE id = $1 AND plan IS DISTINCT FROM $2 RETURNING id', [accountId, plan, now])).length > 0;
}

/** Removes the account; the schema's cascades take what hangs on it. */
export async function deleteAccountRow(tx: Queryable, accountId: number): Promise<void> {
  await tx.query('DELETE FROM accounts WHERE id = $1', [accountId]);
}

/** The account's password hash; null when it has no password, undefined when there is no such account. */
export async function passwordHashOf(db: Queryable, accountId: number): Promise<AccountRecord['password_hash'] | undefined> {
  const [row] = await db.query<Pick<AccountRecord, 'password_hash'>>('SELECT password_hash FROM accounts WHERE id = $1', [accountId]);
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

/** The sealed API keys, for the jobs that cross tables; a key's lookup hash moves with it, in the same statement. */
export const sealedApiKeys = sealedColumn(
  'accounts.api_key_sealed',
  {
    sample: 'SELECT id AS key, api_key_sealed AS value FROM accounts LIMIT 1',
    countNotLike: 'SELECT count(*) AS count FROM accounts WHERE api_key_sealed NOT LIKE $1',
    pageNotLike: 'SELECT id AS key, api_key_sealed AS value FROM accounts WHERE api_key_sealed NOT LIKE $1 AND ($2::int IS NULL OR id > $2) ORDER BY id LIMIT $3',
    reseal: 'UPDATE accounts SET api_key_sealed = $2, api_key_hash = $4 WHERE id = $1 AND api_key_sealed = $3',
  },
  { movesLookupHash: true },
);

/** Where an account's sealed API key lives: it opens only there (sealed by accounts/ and keys/, opened by sessions/). */
export const apiKeyPlace = (accountId: number): SealedPlace => ({ column: sealedApiKeys.place, row: accountId });

type NewToken = Pick<EmailTokenRecord, 'account_id' | 'purpose' | 'token_hash' | 'created_at' | 'expires_at' | 'password_hash' | 'name' | 'company' | 'new_email'>;

export async function insertToken(db: Queryable, token: NewToken): Promise<void> {
  await db.query(
  `INSERT INTO email_tokens (account_id, purpose, token_hash, created_at, expires_at, password_hash, name, company, new_email)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  [token.account_id, token.purpose, token.token_hash, token.created_at, token.expires_at, token.password_hash, token.name, token.company, token.new_email],
  );
}

/** Marks a live token used; the second use, a concurrent one included, finds nothing. */
export async function spendToken(db: Queryable, tokenHash: Buffer, purpose: string, now: Date): Promise<UsedToken | undefined> {
  const [used] = await db.query<UsedToken>(
  `UPDATE email_tokens SET used_at = $3
   WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3
   RETURNING account_id, password_hash, name, company, new_email`,
  [tokenHash, purpose, now],
  );
  return used;
}

/** The account a token of this purpose belongs to, live or not; nothing locked. */
export async function tokenAccountId(db: Queryable, tokenHash: Buffer, purpose: string): Promise<number | undefined> {
  const [row] = await db.query<{ account_id: number }>('SELECT account_id FROM email_tokens WHERE token_hash = $1 AND purpose = $2', [tokenHash, purpose]);
  return row?.account_id;
}

/** The owner of a live token, without using it. */
export async function liveTokenAccount(db: Queryable, tokenHash: Buffer, purpose: string, now: Date): Promise<{ email: string; name: string } | undefined> {
  const [owner] = await db.query<{ email: string; name: string }>(
  `SELECT a.email, a.name FROM email_tokens t JOIN accounts a ON a.id = t.account_id
   WHERE t.token_hash = $1 AND t.purpose = $2 AND t.used_at IS NULL AND t.expires_at > $3`,
  [tokenHash, purpose, now],
  );
  return owner;
}

/** Voids the account's unused tokens of these purposes; returns how many were voided. */
export async function voidTokenRows(db: Queryable, accountId: number, purposes: string[], now: Date): Promise<number> {
  const rows = await db.query('UPDATE email_tokens SET used_at = $3 WHERE account_id = $1 AND purpose = ANY($2) AND used_at IS NULL RETURNING 1', [accountId, purposes, now]);
  return rows.length;
}

export type PendingEmailChange = { new_email: string } & Pick<EmailTokenRecord, 'created_at' | 'expires_at'>;

/** The account's live e-mail change, if one waits for its link. */
export async function pendingEmailChangeRow(db: Queryable, accountId: number, now: Date): Promise<PendingEmailChange | undefined> {
  const [pending] = await db.query<PendingEmailChange>(
  `SELECT new_email, created_at, expires_at FROM email_tokens
   WHERE account_id = $1 AND purpose = 'email_change' AND used_at IS NULL AND expires_at > $2 AND new_email IS NOT NULL
   ORDER BY created_at DESC LIMIT 1`,
  [accountId, now],
  );
  return pending;
}

export type LatestRegistration = { password_hash: string; name: string; company: string | null };

/** The registration the account's latest verification link carried, if any. */
export async function latestRegistration(db: Queryable, accountId: number): Promise<LatestRegistration | undefined> {
  const [latest] = await db.query<LatestRegistration>(
  `SELECT password_hash, name, company FROM email_tokens
   WHERE account_id = $1 AND purpose = 'verify' AND password_hash IS NOT NULL ORDER BY id DESC LIMIT 1`,
  [accountId],
  );
  return latest;
}
