import type { Migration } from './context.ts';

/**
 * The operator's console and the first admin (docs/API.md, Operator API).
 *
 * - admin_email_promotions: each ADMIN_EMAILS address that has made its account an admin.
 *   An address promotes once: kept by address, not on the account, so that neither a demoted
 *   admin who deletes the account and registers again, nor a later account given the same
 *   address, is promoted a second time.
 * - audit_events (event, at): the overview's sign-ins per hour and its latest admin changes
 *   read a few event types over a short time, a range of this index each, instead of every
 *   event of the period or of the whole log.
 * - account_counts: how many accounts there are and how many have a confirmed address, kept
 *   by a trigger on accounts in the transaction of every change, in 16 rows (by id modulo 16,
 *   so that registrations at once seldom wait for one another's row). Counting the accounts
 *   themselves read every one of them for each overview: 160 to 250 ms at 100,000 on this
 *   machine under load, growing with the table; summing 16 rows costs nothing. A TRUNCATE
 *   (which fires no row trigger) empties it too. The service changes one account a
 *   transaction, so holds one of these rows at a time; a bulk load that inserts or deletes
 *   many accounts in one statement takes several, in no set order, and is best run alone.
 * - accounts (created_at): the accounts made in the last 7 days, a short range of it.
 * - accounts (email text_pattern_ops): the console's search by an address's prefix, whatever
 *   the database's collation (the unique index serves equality only, outside the C collation).
 * - event_deliveries (endpoint_id, created_at) of pending ones: each endpoint's oldest pending
 *   delivery, read from the index's first entry instead of the endpoint's whole backlog.
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    CREATE TABLE admin_email_promotions (
      email        text PRIMARY KEY,
      promoted_at  timestamptz NOT NULL
    );
    CREATE INDEX audit_events_event_at_idx ON audit_events (event, at DESC, id DESC);
    CREATE INDEX accounts_created_idx ON accounts (created_at);

    CREATE TABLE account_counts (
      shard     smallint PRIMARY KEY,
      accounts  integer NOT NULL,
      verified  integer NOT NULL
    );
    INSERT INTO account_counts (shard, accounts, verified)
      SELECT shard, count(a.id), count(a.id) FILTER (WHERE a.email_verified)
      FROM generate_series(0, 15) AS shard LEFT JOIN accounts a ON a.id % 16 = shard GROUP BY shard;
    CREATE FUNCTION gatehouse_account_counts() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      account_delta integer := 0;
      verified_delta integer;
      row_id integer;
    BEGIN
      IF TG_OP = 'INSERT' THEN
        row_id := NEW.id; account_delta := 1; verified_delta := NEW.email_verified::integer;
      ELSIF TG_OP = 'DELETE' THEN
        row_id := OLD.id; account_delta := -1; verified_delta := -OLD.email_verified::integer;
      ELSE
        row_id := NEW.id; verified_delta := NEW.email_verified::integer - OLD.email_verified::integer;
      END IF;
      IF account_delta <> 0 OR verified_delta <> 0 THEN
        UPDATE account_counts SET accounts = accounts + account_delta, verified = verified + verified_delta WHERE shard = row_id % 16;
      END IF;
      RETURN NULL;
    END $$;
    CREATE FUNCTION gatehouse_account_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE account_counts SET accounts = 0, verified = 0;
      RETURN NULL;
    END $$;
    CREATE TRIGGER accounts_counts AFTER INSERT OR DELETE OR UPDATE OF email_verified ON accounts
      FOR EACH ROW EXECUTE FUNCTION gatehouse_account_counts();
    CREATE TRIGGER accounts_counts_truncate AFTER TRUNCATE ON accounts
      FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_account_counts_truncate();
    CREATE INDEX accounts_email_prefix_idx ON accounts (email text_pattern_ops);
    CREATE INDEX event_deliveries_endpoint_pending_idx ON event_deliveries (endpoint_id, created_at) WHERE state = 'pending';
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql(`
    DROP INDEX event_deliveries_endpoint_pending_idx;
    DROP INDEX accounts_email_prefix_idx;
    DROP TRIGGER accounts_counts_truncate ON accounts;
    DROP TRIGGER accounts_counts ON accounts;
    DROP FUNCTION gatehouse_account_counts_truncate(), gatehouse_account_counts();
    DROP TABLE account_counts;
    DROP INDEX accounts_created_idx;
    DROP INDEX audit_events_event_at_idx;
    DROP TABLE admin_email_promotions;
  `);
};
