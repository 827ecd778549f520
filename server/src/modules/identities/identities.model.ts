import { DataTypes } from 'sequelize';
import { declareTable, notNull, nullable, primaryKey } from '../../lib/model.ts';

// The identities module's tables (migrations 0010 and 0015). Every statement on them is in identities.repo.ts.

/**
 * A row of `identities`: an account's link to a provider's person, found by (provider,
 * subject) at each sign-in. `email` is the address the provider asserted when the link was
 * made. pg returns int8 (bigserial) as a string.
 */
export type IdentityRecord = {
  id: string;
  account_id: number;
  provider: string;
  subject: string;
  email: string | null;
  linked_at: Date;
};

export const identitiesTable = declareTable<IdentityRecord>('identities', {
  id: primaryKey(DataTypes.BIGINT, { autoIncrement: true }),
  account_id: notNull(DataTypes.INTEGER),
  provider: notNull(DataTypes.TEXT),
  subject: notNull(DataTypes.TEXT),
  email: nullable(DataTypes.TEXT),
  linked_at: notNull(DataTypes.DATE),
});

/**
 * A row of `identity_link_tickets` (migration 0015): a start of a provider's sign-in that
 * may connect the provider to `account_id`, asked for by `session_id` with the password and
 * step-up; single use, deleted by the start that uses it.
 */
export type LinkTicketRecord = {
  id: string;
  account_id: number;
  session_id: string;
  provider: string;
  expires_at: Date;
};

export const linkTicketsTable = declareTable<LinkTicketRecord>('identity_link_tickets', {
  id: primaryKey(DataTypes.UUID),
  account_id: notNull(DataTypes.INTEGER),
  session_id: notNull(DataTypes.UUID),
  provider: notNull(DataTypes.TEXT),
  expires_at: notNull(DataTypes.DATE),
});
