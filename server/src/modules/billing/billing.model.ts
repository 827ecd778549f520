import { DataTypes } from 'sequelize';
import { declareTable, notNull, nullable, primaryKey } from '../../lib/model.ts';

/** A row of `billing_subscriptions` (migration 0002); every statement on it is in billing.repo.ts. */
export type SubscriptionRecord = {
  subscription_id: string;
  /** Null once the account is deleted: later events for it are kept as ignored. */
  account_id: number | null;
  status: string;
  price_id: string | null;
  last_occurred_at: Date;
};

export const billingSubscriptionsTable = declareTable<SubscriptionRecord>('billing_subscriptions', {
  subscription_id: primaryKey(DataTypes.TEXT),
  account_id: nullable(DataTypes.INTEGER),
  status: notNull(DataTypes.TEXT),
  price_id: nullable(DataTypes.TEXT),
  last_occurred_at: notNull(DataTypes.DATE),
});
