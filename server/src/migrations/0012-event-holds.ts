import type { Migration } from './context.ts';

/**
 * event_deliveries.held_until: a delivery found waiting behind an earlier one of its endpoint
 * and account is held, so that the sender's lease stops reading it until then (when the
 * delivery ahead is next tried, or its lease runs out), or until the delivery ahead
 * finishes and lets it go. next_attempt_at stays the retry schedule alone. The due index
 * is per endpoint and orders by when a delivery can next go, holds included: a lease reads
 * each endpoint's due deliveries from the front, and the ones held are not in its way.
 *
 * The order index (each account's pending deliveries of an endpoint, in order) leaves out
 * deliveries with no account, which have no order to keep: a lease reading an endpoint's
 * due queue cannot then take it for the due index when the table's statistics are stale
 * (it did, and read every pending delivery of the endpoint at every lease).
 *
 * event_endpoints is analyzed: a table this small is never analyzed by autovacuum, and the
 * planner's guess for a table never analyzed (some 160 rows) times a lease's read per
 * endpoint makes the lease look costly enough to be JIT-compiled at every call (0.1 s).
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    ALTER TABLE event_deliveries ADD COLUMN held_until timestamptz;
    DROP INDEX event_deliveries_due_idx;
    CREATE INDEX event_deliveries_due_idx ON event_deliveries (endpoint_id, GREATEST(next_attempt_at, held_until), seq) WHERE state = 'pending';
    DROP INDEX event_deliveries_order_idx;
    CREATE INDEX event_deliveries_order_idx ON event_deliveries (endpoint_id, account_id, seq) WHERE state = 'pending' AND account_id IS NOT NULL;
    ANALYZE event_endpoints;
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql(`
    DROP INDEX event_deliveries_due_idx;
    DROP INDEX event_deliveries_order_idx;
    CREATE INDEX event_deliveries_order_idx ON event_deliveries (endpoint_id, account_id, seq) WHERE state = 'pending';
    ALTER TABLE event_deliveries DROP COLUMN held_until;
    CREATE INDEX event_deliveries_due_idx ON event_deliveries (next_attempt_at, seq) WHERE state = 'pending';
  `);
};
