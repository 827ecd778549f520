import type { Clock } from '../../lib/clock.ts';
import type { Queryable } from '../../lib/db.ts';
import { insertAccountRow } from './accounts.insert.ts';
import { ACCOUNT_COLUMNS, type AccountRow } from './accounts.profile.ts';
import { TOKEN_PURPOSES, voidTokens, type TokenPurpose } from './accounts.tokens.ts';

// What a sign-in through an identity provider (modules/identities) does to the accounts table.

/**
 * A new account for the address a provider verified: verified already, without a password
 * (its owner may set one with a reset link), plan free. Undefined when the address was taken
 * meanwhile (the caller then treats it as an existing account).
 */
export async function createProviderAccount(
  tx: Queryable,
  now: Date,
  person: { email: string; name: string },
  apiKey: { hash: Buffer; sealFor(accountId: number): string },
): Promise<AccountRow | undefined> {
  const id = await insertAccountRow(tx, now, { ...person, passwordHash: null, company: null, emailVerified: true, apiKeyHash: apiKey.hash, sealApiKey: apiKey.sealFor });
  if (id === undefined) return undefined;
  const [account] = await tx.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE a.id = $1`, [id]);
  return account;
}

/** The account of this address, its row locked for the caller's transaction. */
export async function lockAccountByEmail(tx: Queryable, email: string): Promise<(AccountRow & { has_password: boolean }) | undefined> {
  const [account] = await tx.query<AccountRow & { has_password: boolean }>(
    `SELECT ${ACCOUNT_COLUMNS}, a.password_hash IS NOT NULL AS has_password FROM accounts a WHERE a.email = $1 FOR UPDATE`,
    [email],
  );
  return account;
}

/** Whether the account has a password, its row locked for the caller's transaction. */
export async function lockAccountPassword(tx: Queryable, accountId: number): Promise<boolean | undefined> {
  const [row] = await tx.query<{ has_password: boolean }>('SELECT password_hash IS NOT NULL AS has_password FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  return row?.has_password;
}

/**
 * A provider that is trusted for e-mail proved who owns an address that was registered but
 * never confirmed: whoever registered it (perhaps not the owner) loses what they chose. The
 * password goes, the links in flight go (a verification link would bring that password
 * back), and the address counts as verified. Its sessions are the caller's to end.
 */
export async function claimUnverifiedAccount(tx: Queryable, clock: Clock, accountId: number): Promise<void> {
  await tx.query('UPDATE accounts SET password_hash = NULL, email_verified = true, updated_at = $2 WHERE id = $1', [accountId, clock.now()]);
  await voidTokens(tx, clock, accountId, Object.keys(TOKEN_PURPOSES) as TokenPurpose[]);
}
