import { DataTypes } from 'sequelize';
import { declareTable, notNull, nullable, primaryKey } from '../../lib/model.ts';
import type { PaymentStatus } from './sites.schemas.ts';

// The sites module's tables, sites and payments (migration 0002). Every statement on them is
// in sites.repo.ts.

/** A row of `sites`: a shop whose payment provider's deliveries come to its webhook URL. */
export type SiteRecord = {
  id: number;
  site_key: string;
  account_id: number;
  name: string;
  secret_sealed: string;
  created_at: Date;
};

export const sitesTable = declareTable<SiteRecord>('sites', {
  id: primaryKey(DataTypes.INTEGER, { autoIncrement: true }),
  site_key: notNull(DataTypes.TEXT, { unique: true }),
  account_id: notNull(DataTypes.INTEGER),
  name: notNull(DataTypes.TEXT),
  secret_sealed: notNull(DataTypes.TEXT),
  created_at: notNull(DataTypes.DATE),
});

/** A row of `payments`: one payment of a site, keyed by its reference. */
export type PaymentRecord = {
  site_id: number;
  reference: string;
  checkout_session: string | null;
  status: PaymentStatus;
  /** bigint: pg returns int8 as a string. */
  amount: string | null;
  currency: string | null;
  last_event_at: Date;
  updated_at: Date;
};

export const paymentsTable = declareTable<PaymentRecord>('payments', {
  site_id: primaryKey(DataTypes.INTEGER),
  reference: primaryKey(DataTypes.TEXT),
  checkout_session: nullable(DataTypes.TEXT),
  status: notNull(DataTypes.TEXT),
  amount: nullable(DataTypes.BIGINT),
  currency: nullable(DataTypes.TEXT),
  last_event_at: notNull(DataTypes.DATE),
  updated_at: notNull(DataTypes.DATE),
});
