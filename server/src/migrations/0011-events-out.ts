import type { Migration } from './context.ts';

/**
 * Events out (modules/events owns the three tables):
 * - event_endpoints: the platform's services that receive signed webhooks from us. Secrets are
 *   sealed (bound to `event_endpoints.secret_sealed` and the row's id); during a rotation's
 *   grace the previous one signs too, until previous_secret_until. failing_since is when the
 *   current run of attempts without a 2xx began (null after a 2xx): five days of it disable
 *   the endpoint.
 * - events: the outbox. Each row is written in the transaction of the change it reports, its
 *   body as it will be sent, byte for byte, on every attempt. No foreign key to accounts: an
 *   account.deleted event outlives its account.
 * - event_deliveries: one per event and endpoint that wants its type, made in the same
 *   statement as the event. seq orders the deliveries of one endpoint and account; a
 *   delivery being sent holds a lease (leased_until) rather than a row lock, so a worker that
 *   dies mid-send only delays it. attempts_log keeps the last ten attempts.
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    CREATE TABLE event_endpoints (
      id                     uuid PRIMARY KEY,
      url                    text NOT NULL,
      description            text,
      events                 text[],
      enabled                boolean NOT NULL DEFAULT true,
      secret_sealed          text NOT NULL,
      previous_secret_sealed text,
      previous_secret_until  timestamptz,
      failing_since          timestamptz,
      disabled_at            timestamptz,
      created_at             timestamptz NOT NULL,
      updated_at             timestamptz NOT NULL
    );

    CREATE TABLE events (
      id          text PRIMARY KEY,
      type        text NOT NULL,
      account_id  integer,
      body        text NOT NULL,
      created_at  timestamptz NOT NULL
    );
    CREATE INDEX events_created_idx ON events (created_at);

    CREATE TABLE event_deliveries (
      id               uuid PRIMARY KEY,
      seq              bigserial NOT NULL UNIQUE,
      endpoint_id      uuid NOT NULL REFERENCES event_endpoints(id) ON DELETE CASCADE,
      event_id         text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      account_id       integer,
      type             text NOT NULL,
      state            text NOT NULL CHECK (state IN ('pending', 'delivered', 'dead', 'skipped')),
      attempts         integer NOT NULL DEFAULT 0,
      step             integer NOT NULL DEFAULT 0,
      last_status      integer,
      last_error       text,
      next_attempt_at  timestamptz NOT NULL,
      leased_until     timestamptz,
      attempts_log     jsonb NOT NULL DEFAULT '[]',
      created_at       timestamptz NOT NULL,
      finished_at      timestamptz,
      UNIQUE (endpoint_id, event_id)
    );
    CREATE INDEX event_deliveries_due_idx ON event_deliveries (next_attempt_at, seq) WHERE state = 'pending';
    CREATE INDEX event_deliveries_order_idx ON event_deliveries (endpoint_id, account_id, seq) WHERE state = 'pending';
    CREATE INDEX event_deliveries_event_idx ON event_deliveries (event_id);
    CREATE INDEX event_deliveries_finished_idx ON event_deliveries (finished_at) WHERE state = 'delivered';
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql('DROP TABLE event_deliveries; DROP TABLE events; DROP TABLE event_endpoints;');
};
