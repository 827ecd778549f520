import type { Clock } from '../../lib/clock.ts';
import type { Queryable } from '../../lib/db.ts';
import type { IdentityRecord } from './identities.model.ts';

// Every statement on `identities` (identities.model.ts): an account's links to the people of
// identity providers. Other modules reach them through the face (index.ts).

export type IdentityRow = Pick<IdentityRecord, 'provider' | 'subject' | 'email' | 'linked_at' | 'account_id'>;

/** The account linked to this provider's person, if any. */
export async function identityBySubject(db: Queryable, provider: string, subject: string): Promise<IdentityRow | undefined> {
  const [row] = await db.query<IdentityRow>('SELECT provider, subject, email, linked_at, account_id FROM identities WHERE provider = $1 AND subject = $2', [provider, subject]);
  return row;
}

/** The account's link to `provider`, if it has one: an account is linked to one person of each provider. */
export async function identityOfAccount(db: Queryable, accountId: number, provider: string): Promise<IdentityRow | undefined> {
  const [row] = await db.query<IdentityRow>('SELECT provider, subject, email, linked_at, account_id FROM identities WHERE account_id = $1 AND provider = $2 LIMIT 1', [accountId, provider]);
  return row;
}

/** The account's links, oldest first. */
export async function identitiesOf(db: Queryable, accountId: number): Promise<IdentityRow[]> {
  return db.query<IdentityRow>('SELECT provider, subject, email, linked_at, account_id FROM identities WHERE account_id = $1 ORDER BY linked_at, id', [accountId]);
}

/**
 * Links the provider's person to the account; false when that person is linked already (to
 * this account or another): the unique (provider, subject) decides, a concurrent link included.
 */
export async function insertIdentity(db: Queryable, clock: Clock, accountId: number, identity: Pick<IdentityRecord, 'provider' | 'subject' | 'email'>): Promise<boolean> {
  const rows = await db.query(
    'INSERT INTO identities (account_id, provider, subject, email, linked_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (provider, subject) DO NOTHING RETURNING id',
    [accountId, identity.provider, identity.subject, identity.email, clock.now()],
  );
  return rows.length > 0;
}

/** Removes the account's link to `provider`; how many went. */
export async function deleteIdentity(db: Queryable, accountId: number, provider: string): Promise<number> {
  return (await db.query('DELETE FROM identities WHERE account_id = $1 AND provider = $2 RETURNING id', [accountId, provider])).length;
}

/** The providers the account is linked to, for the account row locked by the caller. */
export async function linkedProviders(db: Queryable, accountId: number): Promise<string[]> {
  const rows = await db.query<{ provider: string }>('SELECT DISTINCT provider FROM identities WHERE account_id = $1 ORDER BY provider', [accountId]);
  return rows.map((row) => row.provider);
}
