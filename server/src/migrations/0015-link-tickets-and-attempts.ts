import type { Migration } from './context.ts';

/**
 * identity_link_tickets (modules/identities): connecting an identity provider to an account
 * is a security change asked for with the password and step-up (POST
 * /identities/{name}/link); what that call hands out is a ticket for one start of the
 * provider's sign-in, by the session that asked, within 5 minutes. The row is what makes it
 * single use: a start deletes it. Gone with its session or its account.
 *
 * mfa_challenges.attempt_key: a sign-in's first step counts against the per-account-and-client
 * login limit, and is given back only when the sign-in ends in a session, which for an account
 * with a second factor is at its second step, maybe from another address: the mfa_token keeps
 * the count's key (`<address>|<client>`) for that step to give back.
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    CREATE TABLE identity_link_tickets (
      id          uuid PRIMARY KEY,
      account_id  integer NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      session_id  uuid NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      provider    text NOT NULL,
      expires_at  timestamptz NOT NULL
    );
    CREATE INDEX identity_link_tickets_expiry_idx ON identity_link_tickets (expires_at);

    ALTER TABLE mfa_challenges ADD COLUMN attempt_key text;
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql('ALTER TABLE mfa_challenges DROP COLUMN attempt_key');
  await sql('DROP TABLE identity_link_tickets');
};
