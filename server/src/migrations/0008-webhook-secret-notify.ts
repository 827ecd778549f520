import type { Migration } from './context.ts';

/**
 * Every instance keeps the decrypted secrets of recent sites and channels (deps.webhookSecrets),
 * grouped by account and dropped on the notices of migration 0003. Sites and channels can now
 * be updated and deleted (a leaked signing secret replaced, a bot token revoked), so their
 * changes notify too, with the owner's account id: the others stop accepting the old secret
 * at the commit, whoever made the change. Inserts need no notice: unknown scopes are never
 * cached.
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    CREATE TRIGGER sites_auth_notify AFTER UPDATE OR DELETE ON sites
      FOR EACH ROW EXECUTE FUNCTION gatehouse_auth_notify();
    CREATE TRIGGER channels_auth_notify AFTER UPDATE OR DELETE ON channels
      FOR EACH ROW EXECUTE FUNCTION gatehouse_auth_notify();
    CREATE TRIGGER sites_auth_notify_truncate AFTER TRUNCATE ON sites
      FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_auth_notify_all();
    CREATE TRIGGER channels_auth_notify_truncate AFTER TRUNCATE ON channels
      FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_auth_notify_all();
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql(`
    DROP TRIGGER channels_auth_notify_truncate ON channels;
    DROP TRIGGER sites_auth_notify_truncate ON sites;
    DROP TRIGGER channels_auth_notify ON channels;
    DROP TRIGGER sites_auth_notify ON sites;
  `);
};
