import type { Clock } from '../../lib/clock.ts';
import { randomToken, sha256 } from '../../lib/crypto.ts';
import type { Queryable } from '../../lib/db.ts';
import type { UsedToken } from './accounts.model.ts';
import * as repo from './accounts.repo.ts';

/** What an e-mailed token is for, and how long it lives. */
export const TOKEN_PURPOSES = {
  verify: 24 * 3600 * 1000,
  reset: 3600 * 1000,
  email_change: 24 * 3600 * 1000,
} as const;

export type TokenPurpose = keyof typeof TOKEN_PURPOSES;

/** What a token may carry: the registration it confirms, or the address an e-mail change goes to. */
export type TokenData = { passwordHash?: string; name?: string; company?: string | null; newEmail?: string };

/**
 * A new token voids the account's older ones of the same purpose, so only the latest mail
 * works. 32 random bytes; only its SHA-256 is stored. Returns the plaintext for the link.
 * The account row is locked first (by voidTokens): two requests at once would otherwise
 * each void what they see and insert their own, and both links would live.
 */
export async function issueToken(db: Queryable, clock: Clock, accountId: number, purpose: TokenPurpose, data: TokenData = {}): Promise<string> {
  const now = clock.now();
  const token = randomToken(32);
  await voidTokens(db, clock, accountId, [purpose]);
  await repo.insertToken(db, {
    account_id: accountId,
    purpose,
    token_hash: sha256(token),
    created_at: now,
    expires_at: new Date(now.getTime() + TOKEN_PURPOSES[purpose]),
    password_hash: data.passwordHash ?? null,
    name: data.name ?? null,
    company: data.company ?? null,
    new_email: data.newEmail ?? null,
  });
  return token;
}

// Locks, in one order for every writer: the account's row first, then its tokens' rows. A
// link used while a reset, a password change or a sign-out everywhere voids the account's
// links would otherwise hold its token and wait for the account, while the other holds the
// account and waits for the token: a deadlock, which PostgreSQL ends by failing one of them.

/**
 * Uses a live token once, in `tx`, with its account's row locked first (FOR UPDATE): the
 * second use, a concurrent one included, finds nothing.
 */
export async function useToken(tx: Queryable, clock: Clock, purpose: TokenPurpose, token: string): Promise<UsedToken | undefined> {
  const hash = sha256(token);
  const owner = await repo.tokenAccountId(tx, hash, purpose);
  if (owner === undefined || !(await repo.lockAccount(tx, { id: owner }))) return undefined;
  return repo.spendToken(tx, hash, purpose, clock.now());
}

/** The account a token is live for, without using it: what a reset checks a new password against before costly work. */
export async function liveTokenOwner(db: Queryable, clock: Clock, purpose: TokenPurpose, token: string): Promise<{ email: string; name: string } | undefined> {
  return repo.liveTokenAccount(db, sha256(token), purpose, clock.now());
}

/** Voids the account's unused tokens of these purposes, its row locked first; returns how many were voided. */
export async function voidTokens(tx: Queryable, clock: Clock, accountId: number, purposes: TokenPurpose[]): Promise<number> {
  await repo.lockAccount(tx, { id: accountId });
  return repo.voidTokenRows(tx, accountId, purposes, clock.now());
}

/**
 * The links that would let whoever holds them take the account over: a new address for it,
 * or a new password. A password change, a reset and "sign out everywhere" void them, so a
 * link asked for with a stolen password dies when the owner takes the account back.
 */
export const TAKEOVER_LINKS: TokenPurpose[] = ['email_change', 'reset'];

/** The account's live e-mail change, if one waits for its link: where to, since and until when. */
export function pendingEmailChange(db: Queryable, clock: Clock, accountId: number): Promise<repo.PendingEmailChange | undefined> {
  return repo.pendingEmailChangeRow(db, accountId, clock.now());
}
