import type { Migration } from './context.ts';

/**
 * Account lifecycle (docs/API.md, Account lifecycle):
 * - sessions remember where they were opened (ip, user agent) and when last used;
 * - an API key rotated with a grace window keeps the old key's lookup hash until then
 *   (never its ciphertext: /me answers with the new key at once);
 * - an e-mail change token carries the address it confirms;
 * - audit_events, the activity log, written in the transaction of the change it records.
 * The sessions trigger no longer fires for an update that only records use: last_used_at
 * changes every minute of an active session, and must not evict every instance's /me cache.
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    ALTER TABLE sessions
      ADD COLUMN ip text,
      ADD COLUMN user_agent text,
      ADD COLUMN last_used_at timestamptz;
    CREATE INDEX sessions_live_idx ON sessions (account_id, created_at DESC) WHERE revoked_at IS NULL;

    ALTER TABLE accounts
      ADD COLUMN api_key_previous_hash bytea UNIQUE,
      ADD COLUMN api_key_previous_until timestamptz,
      ADD CONSTRAINT accounts_previous_key_whole CHECK ((api_key_previous_hash IS NULL) = (api_key_previous_until IS NULL));
    CREATE INDEX accounts_previous_key_until_idx ON accounts (api_key_previous_until) WHERE api_key_previous_until IS NOT NULL;

    ALTER TABLE email_tokens ADD COLUMN new_email text;

    CREATE TABLE audit_events (
      id          bigserial PRIMARY KEY,
      -- Kept, without the account, when the account is deleted; purged after AUDIT_RETENTION_DAYS.
      account_id  integer REFERENCES accounts(id) ON DELETE SET NULL,
      event       text NOT NULL,
      at          timestamptz NOT NULL,
      ip          text,
      user_agent  text,
      data        jsonb
    );
    CREATE INDEX audit_events_account_idx ON audit_events (account_id, at DESC, id DESC);
    CREATE INDEX audit_events_at_idx ON audit_events (at);

    DROP TRIGGER sessions_auth_notify ON sessions;
    CREATE TRIGGER sessions_auth_notify_update AFTER UPDATE ON sessions
      FOR EACH ROW
      WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.expires_at IS DISTINCT FROM NEW.expires_at OR OLD.account_id <> NEW.account_id)
      EXECUTE FUNCTION gatehouse_auth_notify();
    CREATE TRIGGER sessions_auth_notify_delete AFTER DELETE ON sessions
      FOR EACH ROW EXECUTE FUNCTION gatehouse_auth_notify();
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql(`
    DROP TRIGGER sessions_auth_notify_delete ON sessions;
    DROP TRIGGER sessions_auth_notify_update ON sessions;
    CREATE TRIGGER sessions_auth_notify AFTER UPDATE OR DELETE ON sessions
      FOR EACH ROW EXECUTE FUNCTION gatehouse_auth_notify();
    DROP TABLE audit_events;
    ALTER TABLE email_tokens DROP COLUMN new_email;
    ALTER TABLE accounts DROP CONSTRAINT accounts_previous_key_whole,
      DROP COLUMN api_key_previous_until, DROP COLUMN api_key_previous_hash;
    DROP INDEX sessions_live_idx;
    ALTER TABLE sessions DROP COLUMN last_used_at, DROP COLUMN user_agent, DROP COLUMN ip;
  `);
};
