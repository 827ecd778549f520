import { DataTypes } from 'sequelize';
import { declareTable, notNull, nullable, primaryKey } from '../../lib/model.ts';

// The second factor's tables (migration 0009). Every statement on them is in mfa.repo.ts.
// pg returns int8 (bigint, bigserial) as a string.

/** A row of `mfa_totp`: the account's authenticator, sealed; enabled once a code proved it. */
export type TotpRecord = { account_id: number; secret_sealed: string; enabled_at: Date | null; last_step: string | null; created_at: Date };

export const mfaTotpTable = declareTable<TotpRecord>('mfa_totp', {
  account_id: primaryKey(DataTypes.INTEGER),
  secret_sealed: notNull(DataTypes.TEXT),
  enabled_at: nullable(DataTypes.DATE),
  last_step: nullable(DataTypes.BIGINT),
  created_at: notNull(DataTypes.DATE),
});

/** A row of `mfa_recovery_codes`: one code's hash, used once. */
export type RecoveryCodeRecord = { id: string; account_id: number; code_hash: Buffer; used_at: Date | null; created_at: Date };

export const mfaRecoveryCodesTable = declareTable<RecoveryCodeRecord>('mfa_recovery_codes', {
  id: primaryKey(DataTypes.BIGINT, { autoIncrement: true }),
  account_id: notNull(DataTypes.INTEGER),
  code_hash: notNull(DataTypes.BLOB),
  used_at: nullable(DataTypes.DATE),
  created_at: notNull(DataTypes.DATE),
});

/** A row of `passkeys`: a WebAuthn credential of the account. */
export type PasskeyRecord = {
  id: string;
  account_id: number;
  credential_id: string;
  public_key: Buffer;
  counter: string;
  transports: string[];
  user_handle: string;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
};

export const passkeysTable = declareTable<PasskeyRecord>('passkeys', {
  id: primaryKey(DataTypes.UUID),
  account_id: notNull(DataTypes.INTEGER),
  credential_id: notNull(DataTypes.TEXT, { unique: true }),
  public_key: notNull(DataTypes.BLOB),
  counter: notNull(DataTypes.BIGINT),
  transports: notNull(DataTypes.ARRAY(DataTypes.TEXT), { defaultValue: [] }),
  user_handle: notNull(DataTypes.TEXT),
  name: notNull(DataTypes.TEXT),
  created_at: notNull(DataTypes.DATE),
  last_used_at: nullable(DataTypes.DATE),
});

export type ChallengeKind = 'mfa_token' | 'passkey_register' | 'passkey_login';

/** A row of `mfa_challenges`: a sign-in's second-step token or a WebAuthn challenge, by its hash. */
export type ChallengeRecord = {
  id: string;
  kind: ChallengeKind;
  token_hash: Buffer;
  account_id: number | null;
  failures: number;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  /** An mfa_token's: how the sign-in's first step was made (`password`, or a provider's name); migration 0010. */
  via: string | null;
  /** An mfa_token's: the provider identity to link once the second step passes; migration 0013. */
  pending_link: PendingLink | null;
  /** An mfa_token's: the key its first step counted under in the per-account-and-client login limit, given back when the second step signs in; migration 0015. */
  attempt_key: string | null;
};

/** A provider's person that a sign-in links to its account once its second step passes. */
export type PendingLink = { provider: string; subject: string; email: string | null };

export const mfaChallengesTable = declareTable<ChallengeRecord>('mfa_challenges', {
  id: primaryKey(DataTypes.BIGINT, { autoIncrement: true }),
  kind: notNull(DataTypes.TEXT),
  token_hash: notNull(DataTypes.BLOB, { unique: true }),
  account_id: nullable(DataTypes.INTEGER),
  failures: notNull(DataTypes.INTEGER, { defaultValue: 0 }),
  created_at: notNull(DataTypes.DATE),
  expires_at: notNull(DataTypes.DATE),
  used_at: nullable(DataTypes.DATE),
  via: nullable(DataTypes.TEXT),
  pending_link: nullable(DataTypes.JSONB),
  attempt_key: nullable(DataTypes.TEXT),
});

/** A row of `mfa_step_ups`: a session that proved its second factor, until when. */
export type StepUpRecord = { session_id: string; until: Date };

export const mfaStepUpsTable = declareTable<StepUpRecord>('mfa_step_ups', {
  session_id: primaryKey(DataTypes.UUID),
  until: notNull(DataTypes.DATE),
});

export const MFA_TABLES = [mfaTotpTable, mfaRecoveryCodesTable, passkeysTable, mfaChallengesTable, mfaStepUpsTable];
