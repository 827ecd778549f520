import type { Migration } from './context.ts';

/**
 * Sign-in with an identity provider (modules/identities owns `identities`):
 * - identities: an account's link to a provider's person, found by (provider, subject) at
 *   each sign-in. Nothing the provider returns is kept but its name, the subject, the
 *   address it asserted when the link was made, and when.
 * - accounts.password_hash may be null: an account made through a provider has no password
 *   until its owner sets one with a reset link.
 * - sessions.via: how the session began (`password`, `passkey` or a provider's name), shown
 *   in the sessions list; sessions.auth_time: when the person last proved who they are in
 *   it, for the re-authentication window of a change that would ask for a password. Sessions
 *   from before are taken to have begun with a password at their creation.
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    CREATE TABLE identities (
      id          bigserial PRIMARY KEY,
      account_id  integer NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      provider    text NOT NULL,
      subject     text NOT NULL,
      email       text,
      linked_at   timestamptz NOT NULL,
      UNIQUE (provider, subject)
    );
    CREATE INDEX identities_account_idx ON identities (account_id);

    ALTER TABLE accounts ALTER COLUMN password_hash DROP NOT NULL;

    ALTER TABLE sessions ADD COLUMN via text NOT NULL DEFAULT 'password';
    ALTER TABLE sessions ADD COLUMN auth_time timestamptz;
    UPDATE sessions SET auth_time = created_at;
    ALTER TABLE sessions ALTER COLUMN auth_time SET NOT NULL;

    -- A sign-in waiting for its second step remembers how its first step was made.
    ALTER TABLE mfa_challenges ADD COLUMN via text;
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  // An account without a password gets one that no password matches (not an argon2 hash):
  // it signs in again through a reset link.
  await sql(`
    ALTER TABLE mfa_challenges DROP COLUMN via;
    ALTER TABLE sessions DROP COLUMN auth_time;
    ALTER TABLE sessions DROP COLUMN via;
    UPDATE accounts SET password_hash = '!' WHERE password_hash IS NULL;
    ALTER TABLE accounts ALTER COLUMN password_hash SET NOT NULL;
    DROP TABLE identities;
  `);
};
