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
    CREATE INDEX accounts_email_prefix_idx ON accounts (email text_pattern_ops);
    CREATE INDEX event_deliveries_endpoint_pending_idx ON event_deliveries (endpoint_id, created_at) WHERE state = 'pending';
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql(`
    DROP INDEX event_deliveries_endpoint_pending_idx;
    DROP INDEX accounts_email_prefix_idx;
    DROP INDEX audit_events_event_at_idx;
    DROP TABLE admin_email_promotions;
  `);
};
