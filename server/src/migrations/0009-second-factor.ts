import type { Migration } from './context.ts';

/**
 * The second factor (modules/mfa, the only code with SQL on these tables):
 * - mfa_totp: an account's authenticator secret, sealed like the API key; `enabled_at` null
 *   while it waits for its first code; `last_step`, the last 30 s step a code was accepted
 *   for, so that a code is accepted once.
 * - mfa_recovery_codes: ten per account, each a keyed hash, single use.
 * - passkeys: WebAuthn credentials; `user_handle` is the account's opaque WebAuthn user id,
 *   the same on each of its passkeys.
 * - mfa_challenges: what waits for its answer, single use and short-lived: the `mfa_token` of
 *   a password sign-in waiting for its second step, and WebAuthn challenges (by their hash).
 * - mfa_step_ups: a session that proved its second factor, until when it needs no new proof.
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    CREATE TABLE mfa_totp (
      account_id     integer PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
      secret_sealed  text NOT NULL,
      enabled_at     timestamptz,
      last_step      bigint,
      created_at     timestamptz NOT NULL
    );

    CREATE TABLE mfa_recovery_codes (
      id          bigserial PRIMARY KEY,
      account_id  integer NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      code_hash   bytea NOT NULL,
      used_at     timestamptz,
      created_at  timestamptz NOT NULL
    );
    CREATE INDEX mfa_recovery_codes_account_idx ON mfa_recovery_codes (account_id);

    CREATE TABLE passkeys (
      id             uuid PRIMARY KEY,
      account_id     integer NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      credential_id  text NOT NULL UNIQUE,
      public_key     bytea NOT NULL,
      counter        bigint NOT NULL,
      transports     text[] NOT NULL DEFAULT '{}',
      user_handle    text NOT NULL,
      name           text NOT NULL,
      created_at     timestamptz NOT NULL,
      last_used_at   timestamptz
    );
    CREATE INDEX passkeys_account_idx ON passkeys (account_id, created_at);

    CREATE TABLE mfa_challenges (
      id          bigserial PRIMARY KEY,
      kind        text NOT NULL CHECK (kind IN ('mfa_token', 'passkey_register', 'passkey_login')),
      token_hash  bytea NOT NULL UNIQUE,
      account_id  integer REFERENCES accounts(id) ON DELETE CASCADE,
      failures    integer NOT NULL DEFAULT 0,
      created_at  timestamptz NOT NULL,
      expires_at  timestamptz NOT NULL,
      used_at     timestamptz
    );
    CREATE INDEX mfa_challenges_expires_idx ON mfa_challenges (expires_at);

    CREATE TABLE mfa_step_ups (
      session_id  uuid PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
      until       timestamptz NOT NULL
    );
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql(`
    DROP TABLE mfa_step_ups;
    DROP TABLE mfa_challenges;
    DROP TABLE passkeys;
    DROP TABLE mfa_recovery_codes;
    DROP TABLE mfa_totp;
  `);
};
