import type { Migration } from './context.ts';

/**
 * Every instance keeps recently authenticated accounts and sessions in memory
 * (modules/sessions/sessions.cache.ts). These triggers tell it, on commit, which account to forget,
 * whoever made the change: the service, the worker, or SQL by hand. Inserts need no
 * notice because only rows that exist are cached. PostgreSQL folds identical payloads of one
 * transaction into one notification, so row-level triggers cost one message per account.
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    CREATE FUNCTION gatehouse_auth_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_TABLE_NAME = 'accounts' THEN
        PERFORM pg_notify('gatehouse_auth', OLD.id::text);
      ELSE
        PERFORM pg_notify('gatehouse_auth', OLD.account_id::text);
      END IF;
      RETURN NULL;
    END $$;

    -- TRUNCATE fires no row triggers; '*' makes every instance forget everything.
    CREATE FUNCTION gatehouse_auth_notify_all() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('gatehouse_auth', '*');
      RETURN NULL;
    END $$;

    CREATE TRIGGER accounts_auth_notify AFTER UPDATE OR DELETE ON accounts
      FOR EACH ROW EXECUTE FUNCTION gatehouse_auth_notify();
    CREATE TRIGGER sessions_auth_notify AFTER UPDATE OR DELETE ON sessions
      FOR EACH ROW EXECUTE FUNCTION gatehouse_auth_notify();
    CREATE TRIGGER accounts_auth_notify_truncate AFTER TRUNCATE ON accounts
      FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_auth_notify_all();
    CREATE TRIGGER sessions_auth_notify_truncate AFTER TRUNCATE ON sessions
      FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_auth_notify_all();
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql(`
    DROP TRIGGER sessions_auth_notify_truncate ON sessions;
    DROP TRIGGER accounts_auth_notify_truncate ON accounts;
    DROP TRIGGER sessions_auth_notify ON sessions;
    DROP TRIGGER accounts_auth_notify ON accounts;
    DROP FUNCTION gatehouse_auth_notify_all(), gatehouse_auth_notify();
  `);
};
