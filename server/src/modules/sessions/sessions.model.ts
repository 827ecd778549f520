import { DataTypes } from 'sequelize';
import { declareTable, notNull, nullable, primaryKey } from '../../lib/model.ts';
import type { SecondStep } from './sessions.types.ts';

/** A row of `sessions` (migrations 0001, 0005, 0010 and 0016); every statement on it is in sessions.repo.ts. */
export type SessionRecord = {
  id: string;
  account_id: number;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  ip: string | null;
  user_agent: string | null;
  last_used_at: Date | null;
  /** How the session began: `password`, `passkey` or an identity provider's name. */
  via: string;
  /** When its person last proved who they are: the re-authentication window of an account without a password. */
  auth_time: Date;
  /** The second factor its sign-in proved (`totp`, `recovery_code` or `passkey`); null: none. */
  second_step: SecondStep | null;
};

export const sessionsTable = declareTable<SessionRecord>('sessions', {
  id: primaryKey(DataTypes.UUID),
  account_id: notNull(DataTypes.INTEGER),
  created_at: notNull(DataTypes.DATE),
  expires_at: notNull(DataTypes.DATE),
  revoked_at: nullable(DataTypes.DATE),
  ip: nullable(DataTypes.TEXT),
  user_agent: nullable(DataTypes.TEXT),
  last_used_at: nullable(DataTypes.DATE),
  via: notNull(DataTypes.TEXT, { defaultValue: 'password' }),
  auth_time: notNull(DataTypes.DATE),
  second_step: nullable(DataTypes.TEXT),
});
