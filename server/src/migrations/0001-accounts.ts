import type { Migration } from './context.ts';

export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    CREATE TABLE accounts (
      id              serial PRIMARY KEY,
      email           text NOT NULL UNIQUE,
      password_hash   text NOT NULL,
      name            text NOT NULL,
      company         text,
      plan            text NOT NULL DEFAULT 'free',
      role            text NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin')),
      email_verified  boolean NOT NULL DEFAULT false,
      api_key_hash    bytea NOT NULL UNIQUE,
      api_key_sealed  text NOT NULL,
      created_at      timestamptz NOT NULL DEFAULT now(),
      updated_at      timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE sessions (
      id          uuid PRIMARY KEY,
      account_id  integer NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      created_at  timestamptz NOT NULL,
      expires_at  timestamptz NOT NULL,
      revoked_at  timestamptz
    );
    CREATE INDEX sessions_account_idx ON sessions (account_id);

    CREATE TABLE email_tokens (
      id          serial PRIMARY KEY,
      account_id  integer NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      purpose     text NOT NULL,
      token_hash  bytea NOT NULL UNIQUE,
      created_at  timestamptz NOT NULL,
      expires_at  timestamptz NOT NULL,
      used_at     timestamptz
    );
    CREATE INDEX email_tokens_account_idx ON email_tokens (account_id, purpose);

    -- Fixed-window counters for request rate limits, shared by every instance.
    CREATE TABLE rate_limits (
      key         text PRIMARY KEY,
      hits        integer NOT NULL,
      window_end  timestamptz NOT NULL
    );
    CREATE INDEX rate_limits_window_idx ON rate_limits (window_end);
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql('DROP TABLE rate_limits, email_tokens, sessions, accounts');
};
