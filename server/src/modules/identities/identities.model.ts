import { DataTypes } from 'sequelize';
import { declareTable, notNull, nullable, primaryKey } from '../../lib/model.ts';

// The identities module's table (migration 0010). Every statement on it is in identities.repo.ts.

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
