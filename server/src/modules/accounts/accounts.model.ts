import { DataTypes } from 'sequelize';
import { declareTable, notNull, nullable, primaryKey } from '../../lib/model.ts';

// The accounts module's tables, accounts, email_tokens, admin_email_promotions and
// account_counts, as migrations 0001, 0005, 0010 and 0017 left them. Every statement on them is
// in accounts.repo.ts (account_counts is written by a trigger on accounts, migration 0017).

/** A row of `accounts`, as pg returns it. */
export type AccountRecord = {
  id: number;
  email: string;
  /** Null for an account made through an identity provider that has not set a password. */
  password_hash: string | null;
  name: string;
  company: string | null;
  plan: string;
  role: 'user' | 'admin';
  email_verified: boolean;
  api_key_hash: Buffer;
  api_key_sealed: string;
  created_at: Date;
  updated_at: Date;
  api_key_previous_hash: Buffer | null;
  api_key_previous_until: Date | null;
};

export const accountsTable = declareTable<AccountRecord>('accounts', {
  id: primaryKey(DataTypes.INTEGER, { autoIncrement: true }),
  email: notNull(DataTypes.TEXT, { unique: true }),
  password_hash: nullable(DataTypes.TEXT),
  name: notNull(DataTypes.TEXT),
  company: nullable(DataTypes.TEXT),
  plan: notNull(DataTypes.TEXT, { defaultValue: 'free' }),
  role: notNull(DataTypes.TEXT, { defaultValue: 'user' }),
  email_verified: notNull(DataTypes.BOOLEAN, { defaultValue: false }),
  api_key_hash: notNull(DataTypes.BLOB, { unique: true }),
  api_key_sealed: notNull(DataTypes.TEXT),
  created_at: notNull(DataTypes.DATE),
  updated_at: notNull(DataTypes.DATE),
  api_key_previous_hash: nullable(DataTypes.BLOB),
  api_key_previous_until: nullable(DataTypes.DATE),
});

const ACCOUNT_ROW_FIELDS = ['id', 'email', 'name', 'company', 'plan', 'role', 'email_verified', 'api_key_sealed', 'created_at'] as const satisfies ReadonlyArray<keyof AccountRecord>;

/** An account as the other modules see it: what authenticates, signs in and is shown. */
export type AccountRow = Pick<AccountRecord, (typeof ACCOUNT_ROW_FIELDS)[number]>;

/** The columns of an AccountRow, on `accounts a`: one list gives both. */
export const ACCOUNT_COLUMNS = ACCOUNT_ROW_FIELDS.map((field) => `a.${field}`).join(', ');

/** A row of `email_tokens`: a mailed link's hash, and what the link carries. */
export type EmailTokenRecord = {
  id: number;
  account_id: number;
  purpose: string;
  token_hash: Buffer;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  password_hash: string | null;
  name: string | null;
  company: string | null;
  new_email: string | null;
};

export const emailTokensTable = declareTable<EmailTokenRecord>('email_tokens', {
  id: primaryKey(DataTypes.INTEGER, { autoIncrement: true }),
  account_id: notNull(DataTypes.INTEGER),
  purpose: notNull(DataTypes.TEXT),
  token_hash: notNull(DataTypes.BLOB, { unique: true }),
  created_at: notNull(DataTypes.DATE),
  expires_at: notNull(DataTypes.DATE),
  used_at: nullable(DataTypes.DATE),
  password_hash: nullable(DataTypes.TEXT),
  name: nullable(DataTypes.TEXT),
  company: nullable(DataTypes.TEXT),
  new_email: nullable(DataTypes.TEXT),
});

/** What a used token carries back. */
export type UsedToken = Pick<EmailTokenRecord, 'account_id' | 'password_hash' | 'name' | 'company' | 'new_email'>;

/** A row of `admin_email_promotions`: an ADMIN_EMAILS address that has made its account an admin, once. */
export type AdminEmailPromotionRecord = {
  email: string;
  promoted_at: Date;
};

export const adminEmailPromotionsTable = declareTable<AdminEmailPromotionRecord>('admin_email_promotions', {
  email: primaryKey(DataTypes.TEXT),
  promoted_at: notNull(DataTypes.DATE),
});

/** A row of `account_counts`: accounts and confirmed ones among those whose id is `shard` modulo 16, kept by a trigger on accounts. */
export type AccountCountRecord = {
  shard: number;
  accounts: number;
  verified: number;
};

export const accountCountsTable = declareTable<AccountCountRecord>('account_counts', {
  shard: primaryKey(DataTypes.SMALLINT),
  accounts: notNull(DataTypes.INTEGER),
  verified: notNull(DataTypes.INTEGER),
});
