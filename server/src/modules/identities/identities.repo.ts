import type { Clock } from '../../lib/clock.ts';
import type { Queryable } from '../../lib/db.ts';
import type { IdentityRecord, LinkTicketRecord } from './identities.model.ts';

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

/** Keeps a link ticket (identities.tickets.ts) until a start uses it or it expires. */
export async function insertLinkTicket(db: Queryable, ticket: LinkTicketRecord): Promise<void> {
  await db.query('INSERT INTO identity_link_tickets (id, account_id, session_id, provider, expires_at) VALUES ($1, $2, $3, $4, $5)', [
    ticket.id,
    ticket.account_id,
    ticket.session_id,
    ticket.provider,
    ticket.expires_at,
  ]);
}

/**
 * Uses the ticket: deleted, and returned, when it is live and for `provider`; undefined for
 * one used before (a second start with it, a concurrent one included), expired, or gone
 * with its session.
 */
export async function useLinkTicket(db: Queryable, clock: Clock, id: string, provider: string): Promise<LinkTicketRecord | undefined> {
  const [row] = await db.query<LinkTicketRecord>(
    'DELETE FROM identity_link_tickets WHERE id = $1 AND provider = $2 AND expires_at > $3 RETURNING id, account_id, session_id, provider, expires_at',
    [id, provider, clock.now()],
  );
  return row;
}

/** The worker's tidying: tickets nobody used in their 5 minutes. */
export async function purgeExpiredLinkTickets(db: Queryable, clock: Clock): Promise<number> {
  return (await db.query('DELETE FROM identity_link_tickets WHERE expires_at <= $1 RETURNING 1', [clock.now()])).length;
}
