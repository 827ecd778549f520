import type { Clock } from '../../lib/clock.ts';
import { randomToken, sha256 } from '../../lib/crypto.ts';
import type { Queryable } from '../../lib/db.ts';

/** What an e-mailed token is for, and how long it lives. */
export const TOKEN_PURPOSES = {
  verify: 24 * 3600 * 1000,
  reset: 3600 * 1000,
  email_change: 24 * 3600 * 1000,
} as const;

export type TokenPurpose = keyof typeof TOKEN_PURPOSES;

/** What a token may carry: the registration it confirms, or the address an e-mail change goes to. */
export type TokenData = { passwordHash?: string; name?: string; company?: string | null; newEmail?: string };

export type UsedToken = { account_id: number; password_hash: string | null; name: string | null; company: string | null; new_email: string | null };

/**
 * A new token voids the account's older ones of the same purpose, so only the latest mail
 * works. 32 random bytes; only its SHA-256 is stored. Returns the plaintext for the link.
 * The account row is locked first: two requests at once would otherwise each void what
 * they see and insert their own, and both links would live.
 */
export async function issueToken(db: Queryable, clock: Clock, accountId: number, purpose: TokenPurpose, data: TokenData = {}): Promise<string> {
  const now = clock.now();
  const token = randomToken(32);
  await db.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  await voidTokens(db, clock, accountId, [purpose]);
  await db.query(
    `INSERT INTO email_tokens (account_id, purpose, token_hash, created_at, expires_at, password_hash, name, company, new_email)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [accountId, purpose, sha256(token), now, new Date(now.getTime() + TOKEN_PURPOSES[purpose]), data.passwordHash ?? null, data.name ?? null, data.company ?? null, data.newEmail ?? null],
  );
  return token;
}

/** Uses a live token once: the second use, a concurrent one included, finds nothing. */
export async function useToken(db: Queryable, clock: Clock, purpose: TokenPurpose, token: string): Promise<UsedToken | undefined> {
  const [used] = await db.query<UsedToken>(
    `UPDATE email_tokens SET used_at = $3
     WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3
     RETURNING account_id, password_hash, name, company, new_email`,
    [sha256(token), purpose, clock.now()],
  );
  return used;
}

/** The account a token is live for, without using it: what a reset checks a new password against before costly work. */
export async function liveTokenOwner(db: Queryable, clock: Clock, purpose: TokenPurpose, token: string): Promise<{ email: string; name: string } | undefined> {
  const [owner] = await db.query<{ email: string; name: string }>(
    `SELECT a.email, a.name FROM email_tokens t JOIN accounts a ON a.id = t.account_id
     WHERE t.token_hash = $1 AND t.purpose = $2 AND t.used_at IS NULL AND t.expires_at > $3`,
    [sha256(token), purpose, clock.now()],
  );
  return owner;
}

/** Whether a token is live, without using it: a GET page or a check before costly work. */
export async function tokenIsLive(db: Queryable, clock: Clock, purpose: TokenPurpose, token: string): Promise<boolean> {
  return (await liveTokenOwner(db, clock, purpose, token)) !== undefined;
}

/** Voids the account's unused tokens of these purposes; returns how many were voided. */
export async function voidTokens(db: Queryable, clock: Clock, accountId: number, purposes: TokenPurpose[]): Promise<number> {
  const rows = await db.query(
    'UPDATE email_tokens SET used_at = $3 WHERE account_id = $1 AND purpose = ANY($2) AND used_at IS NULL RETURNING 1',
    [accountId, purposes, clock.now()],
  );
  return rows.length;
}

/**
 * The links that would let whoever holds them take the account over: a new address for it,
 * or a new password. A password change, a reset and "sign out everywhere" void them, so a
 * link asked for with a stolen password dies when the owner takes the account back.
 */
export const TAKEOVER_LINKS: TokenPurpose[] = ['email_change', 'reset'];

/** The account's live e-mail change, if one waits for its link: where to, since and until when. */
export async function pendingEmailChange(db: Queryable, clock: Clock, accountId: number): Promise<{ new_email: string; created_at: Date; expires_at: Date } | undefined> {
  const [pending] = await db.query<{ new_email: string; created_at: Date; expires_at: Date }>(
    `SELECT new_email, created_at, expires_at FROM email_tokens
     WHERE account_id = $1 AND purpose = 'email_change' AND used_at IS NULL AND expires_at > $2 AND new_email IS NOT NULL
     ORDER BY created_at DESC LIMIT 1`,
    [accountId, clock.now()],
  );
  return pending;
}
