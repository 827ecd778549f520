import { DataTypes } from 'sequelize';
import { declareTable, notNull, nullable, primaryKey } from '../../lib/model.ts';

// The events module's tables (migrations 0011 and 0012): endpoints, the outbox and its deliveries.
// Every statement on them is in events.repo.ts.

/** A row of `event_endpoints`: a service of the platform that receives our signed webhooks. */
export type EventEndpointRecord = {
  id: string;
  url: string;
  description: string | null;
  /** The event types it wants; null for all. */
  events: string[] | null;
  enabled: boolean;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: Date | null;
  failing_since: Date | null;
  disabled_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

export const eventEndpointsTable = declareTable<EventEndpointRecord>('event_endpoints', {
  id: primaryKey(DataTypes.UUID),
  url: notNull(DataTypes.TEXT),
  description: nullable(DataTypes.TEXT),
  events: nullable(DataTypes.ARRAY(DataTypes.TEXT)),
  enabled: notNull(DataTypes.BOOLEAN),
  secret_sealed: notNull(DataTypes.TEXT),
  previous_secret_sealed: nullable(DataTypes.TEXT),
  previous_secret_until: nullable(DataTypes.DATE),
  failing_since: nullable(DataTypes.DATE),
  disabled_at: nullable(DataTypes.DATE),
  created_at: notNull(DataTypes.DATE),
  updated_at: notNull(DataTypes.DATE),
});

/** A row of `events`: the outbox, one per change reported, its body as sent. */
export type EventRecord = {
  id: string;
  type: string;
  account_id: number | null;
  body: string;
  created_at: Date;
};

export const eventsTable = declareTable<EventRecord>('events', {
  id: primaryKey(DataTypes.TEXT),
  type: notNull(DataTypes.TEXT),
  account_id: nullable(DataTypes.INTEGER),
  body: notNull(DataTypes.TEXT),
  created_at: notNull(DataTypes.DATE),
});

export const DELIVERY_STATES = ['pending', 'delivered', 'dead', 'skipped'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** One attempt as the delivery's log keeps it. */
export type AttemptLogEntry = { at: string; status: number | null; error: string | null; ms: number };

/** A row of `event_deliveries`: one event on its way to one endpoint. */
export type EventDeliveryRecord = {
  id: string;
  /** bigint: pg returns int8 as a string. */
  seq: string;
  endpoint_id: string;
  event_id: string;
  account_id: number | null;
  type: string;
  state: DeliveryState;
  /** Every attempt made. */
  attempts: number;
  /** Attempts since it was last queued: where it stands in the retry schedule. */
  step: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: Date;
  /**
   * Set by a lease that found it waiting behind an earlier delivery of its endpoint and
   * account: not read again before then, unless the one ahead finishes first and lets it go.
   */
  held_until: Date | null;
  leased_until: Date | null;
  attempts_log: AttemptLogEntry[];
  created_at: Date;
  finished_at: Date | null;
};

export const eventDeliveriesTable = declareTable<EventDeliveryRecord>('event_deliveries', {
  id: primaryKey(DataTypes.UUID),
  seq: notNull(DataTypes.BIGINT, { autoIncrement: true, unique: true }),
  endpoint_id: notNull(DataTypes.UUID),
  event_id: notNull(DataTypes.TEXT),
  account_id: nullable(DataTypes.INTEGER),
  type: notNull(DataTypes.TEXT),
  state: notNull(DataTypes.TEXT),
  attempts: notNull(DataTypes.INTEGER),
  step: notNull(DataTypes.INTEGER),
  last_status: nullable(DataTypes.INTEGER),
  last_error: nullable(DataTypes.TEXT),
  next_attempt_at: notNull(DataTypes.DATE),
  held_until: nullable(DataTypes.DATE),
  leased_until: nullable(DataTypes.DATE),
  attempts_log: notNull(DataTypes.JSONB),
  created_at: notNull(DataTypes.DATE),
  finished_at: nullable(DataTypes.DATE),
});

export const EVENT_TABLES = [eventEndpointsTable, eventsTable, eventDeliveriesTable];
