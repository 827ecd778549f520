import type { Clock } from '../../lib/clock.ts';
import type { Queryable } from '../../lib/db.ts';
import type { AccountRow } from './accounts.model.ts';
import { accountById, clearPasswordAndVerify, insertAccount, nextAccountId } from './accounts.repo.ts';
import { TOKEN_PURPOSES, voidTokens, type TokenPurpose } from './accounts.tokens.ts';

// What a sign-in through an identity provider (modules/identities) does to the accounts
// module's tables; the statements are accounts.repo.ts's.

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
  const id = await nextAccountId(tx);
  const created = await insertAccount(tx, {
    id,
    email: person.email,
    password_hash: null,
    name: person.name,
    company: null,
    email_verified: true,
    api_key_hash: apiKey.hash,
    api_key_sealed: apiKey.sealFor(id),
    created_at: now,
  });
  return created === undefined ? undefined : accountById(tx, created);
}

/**
 * A provider that is trusted for e-mail proved who owns an address that was registered but
 * never confirmed: whoever registered it (perhaps not the owner) loses what they chose. The
 * password goes, the links in flight go (a verification link would bring that password
 * back), and the address counts as verified. Its sessions are the caller's to end.
 */
export async function claimUnverifiedAccount(tx: Queryable, clock: Clock, accountId: number): Promise<void> {
  await clearPasswordAndVerify(tx, accountId, clock.now());
  await voidTokens(tx, clock, accountId, Object.keys(TOKEN_PURPOSES) as TokenPurpose[]);
}
