import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Clock } from './lib/clock.ts';
import type { Logger } from './lib/logger.ts';

/*
 * The service's Prometheus metrics (docs/OPERATIONS.md, Metrics), on a registry of its own: several
 * services in one process (tests) each count their own, and nothing a library registers on
 * prom-client's global registry leaks into the scrape.
 */

export type LoginOutcome = 'succeeded' | 'failed' | 'locked' | 'unverified' | 'rate_limited' | 'mfa_required' | 'mfa_failed';
export type WebhookOutcome = 'accepted' | 'duplicate' | 'rejected';
/** What one attempt to send an event came to: delivered (2xx), retry (to be tried again), dead (no tries left). */
export type EventOutcome = 'delivered' | 'retry' | 'dead';

/** Event endpoints by whether they are sent to; an endpoint is disabled by an operator or after failing for days. */
export type EndpointCounts = { enabled: number; disabled: number };

/** One row of `countByProviderAndState` (webhooks/inbox/repo.ts). */
export type InboxCount = { provider: string; state: string; count: number; oldest_received: Date | null };

/**
 * Where the inbox gauges read from. The query lives in webhooks/inbox/repo.ts, which deps.ts
 * (and so this file) cannot import without an import cycle (repo -> provider -> deps), so
 * metrics-readings.ts hands it over for whoever serves /metrics (a gateway, a worker's port).
 */
export type InboxSource = {
  read(): Promise<InboxCount[]>;
  /** Every provider gets a series per state from the first scrape, zeros included, so increase() works on its first dead delivery. */
  providers: readonly string[];
};

export type Metrics = {
  /** What GET /metrics writes out. */
  registry: Registry;
  /** One answered request; `route` is a pattern, never a raw path. */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  countWebhook(provider: string, outcome: WebhookOutcome): void;
  countJobFailure(queue: string): void;
  /** A try of the worker's inbox dispatcher that failed as a whole (the database away, say); it tries again with backoff. */
  countDispatchFailure(): void;
  countLogin(outcome: LoginOutcome): void;
  /** `rule` is the rule's name (login-ip, register-address, …), never the key it counted. */
  countRateLimitRefusal(rule: string): void;
  readInboxFrom(source: InboxSource): void;
  countEventDelivery(type: string, outcome: EventOutcome): void;
  /** Where the age of the oldest pending event delivery is read from (handed over like the inbox's). */
  readEventsFrom(source: () => Promise<Date | null>): void;
  /** Where the event endpoints are counted from (handed over like the inbox's). */
  readEndpointsFrom(source: () => Promise<EndpointCounts>): void;
  /** Where the number of requests being handled is read from: the gateway counts them. */
  readRequestsInFlightFrom(source: () => number): void;
  /** A log line dropped because too much was waiting to be written (lib/logger.ts). */
  countDroppedLogLine(): void;
};

const INBOX_STATES = ['received', 'processed', 'ignored', 'dead'] as const;

/** A scrape at most this often reaches the database; Prometheus scrapes every 15 s or so. */
const INBOX_CACHE_MS = 5_000;

/** For a service answering in 1 to 100 ms: fine steps there, a few beyond for the slow tail. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export function createMetrics(options: { clock: Clock; logger: Logger }): Metrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  const httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers,
  });
  const httpRequestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request reaching the gateway to its answer, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const webhookDeliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook deliveries by provider and outcome: accepted (kept), duplicate (already kept), rejected (signature, payload or unknown scope).',
    labelNames: ['provider', 'outcome'] as const,
    registers,
  });
  const jobFailures = new Counter({
    name: 'job_failures_total',
    help: 'Jobs that failed a try (pg-boss retries them), by queue; for webhook-process, a delivery\'s first attempt from the inbox too.',
    labelNames: ['queue'] as const,
    registers,
  });
  const dispatchFailures = new Counter({
    name: 'inbox_dispatch_failures_total',
    help: "Tries of the worker's inbox dispatcher that failed as a whole (the database away, say); it tries again with backoff.",
    registers,
  });
  const logins = new Counter({
    name: 'logins_total',
    help: 'Login attempts by outcome: succeeded, failed, locked, unverified, rate_limited.',
    labelNames: ['outcome'] as const,
    registers,
  });
  const rateLimitRefusals = new Counter({
    name: 'rate_limit_refusals_total',
    help: 'Requests refused by a rate limit, by the rule that refused.',
    labelNames: ['rule'] as const,
    registers,
  });
  let requestsInFlight: (() => number) | undefined;
  new Gauge({
    name: 'http_requests_in_flight',
    help: 'HTTP requests being handled now, this scrape included, those whose clients hung up too.',
    registers,
    collect() {
      if (requestsInFlight) this.set(requestsInFlight());
    },
  });
  const droppedLogLines = new Counter({
    name: 'log_lines_dropped_total',
    help: 'Log lines dropped because stdout was not read and 16 MiB of lines were waiting.',
    registers,
  });
  const inbox = registerInboxGauges(registry, options);
  const eventDeliveries = new Counter({
    name: 'event_deliveries_total',
    help: 'Attempts to send an event out, by event type and outcome: delivered (2xx), retry (to be tried again), dead (no tries left).',
    labelNames: ['type', 'outcome'] as const,
    registers,
  });
  const events = registerEventGauges(registry, options);

  return {
    registry,
    observeRequest(route, method, status, seconds) {
      // One labels object for both: this runs on every request.
      const labels = { route, method, status };
      httpRequests.inc(labels);
      httpRequestDuration.observe(labels, seconds);
    },
    countWebhook: (provider, outcome) => webhookDeliveries.inc({ provider, outcome }),
    countJobFailure: (queue) => jobFailures.inc({ queue }),
    countDispatchFailure: () => dispatchFailures.inc(),
    countLogin: (outcome) => logins.inc({ outcome }),
    countRateLimitRefusal: (rule) => rateLimitRefusals.inc({ rule }),
    readInboxFrom: inbox.readFrom,
    countEventDelivery: (type, outcome) => eventDeliveries.inc({ type, outcome }),
    readEventsFrom: events.readOldestFrom,
    readEndpointsFrom: events.readEndpointsFrom,
    readRequestsInFlightFrom: (source) => (requestsInFlight = source),
    countDroppedLogLine: () => droppedLogLines.inc(),
  };
}

type InboxSnapshot = { rows: InboxCount[]; providers: readonly string[] };

/**
 * A reading of the database that gauges take on scrape: kept for INBOX_CACHE_MS on the service
 * clock, and shared by the concurrent collects of one scrape (one pending read). A failed read
 * is logged and gives undefined to that scrape, which then leaves its gauges empty rather than
 * failing the whole scrape (the request and process metrics matter most during an outage);
 * it is not kept.
 */
function cachedReading<T>(options: { clock: Clock; logger: Logger }, what: string) {
  const { clock, logger } = options;
  let source: (() => Promise<T>) | undefined;
  let cached: { at: number; value: Promise<T | undefined> } | undefined;
  return {
    readFrom(next: () => Promise<T>) {
      source = next;
      cached = undefined;
    },
    read(): Promise<T | undefined> {
      const now = clock.now().getTime();
      if (cached && now - cached.at < INBOX_CACHE_MS && now >= cached.at) return cached.value;
      if (!source) return Promise.resolve(undefined);
      const value: Promise<T | undefined> = source().catch((error: unknown) => {
        logger.warn({ err: error }, `metrics: ${what} could not be read`);
        if (cached?.value === value) cached = undefined;
        return undefined;
      });
      cached = { at: now, value };
      return value;
    },
  };
}

/**
 * `inbox_deliveries{provider,state}` and `inbox_oldest_pending_seconds{provider}`, filled on
 * scrape from one query whose answer both share (cachedReading).
 */
function registerInboxGauges(registry: Registry, options: { clock: Clock; logger: Logger }) {
  const { clock } = options;
  const reading = cachedReading<InboxSnapshot>(options, 'the inbox counts');
  const snapshot = reading.read;

  new Gauge({
    name: 'inbox_deliveries',
    help: 'Webhook inbox rows by provider and state (received, processed, ignored, dead).',
    labelNames: ['provider', 'state'] as const,
    registers: [registry],
    async collect() {
      const found = await snapshot();
      this.reset();
      if (!found) return;
      for (const provider of found.providers) for (const state of INBOX_STATES) this.set({ provider, state }, 0);
      for (const row of found.rows) this.set({ provider: row.provider, state: row.state }, row.count);
    },
  });
  new Gauge({
    name: 'inbox_oldest_pending_seconds',
    help: 'Age of the oldest delivery still waiting to be applied (state received), by provider; 0 when none waits.',
    labelNames: ['provider'] as const,
    registers: [registry],
    async collect() {
      const found = await snapshot();
      this.reset();
      if (!found) return;
      const now = clock.now().getTime();
      for (const provider of found.providers) this.set({ provider }, 0);
      for (const row of found.rows) {
        if (row.state === 'received' && row.oldest_received) this.set({ provider: row.provider }, Math.max(0, (now - row.oldest_received.getTime()) / 1000));
      }
    },
  });

  return {
    readFrom(next: InboxSource) {
      reading.readFrom(async () => ({ rows: await next.read(), providers: next.providers }));
    },
  };
}

/**
 * `event_oldest_pending_seconds` and `event_endpoints{state}`, each read like the inbox's
 * counts (cachedReading): a scrape does not reach the database more often than every
 * INBOX_CACHE_MS; the age follows the clock at each scrape.
 */
function registerEventGauges(registry: Registry, options: { clock: Clock; logger: Logger }) {
  const oldestPending = cachedReading<Date | null>(options, 'the oldest pending event');
  new Gauge({
    name: 'event_oldest_pending_seconds',
    help: 'Age of the oldest event delivery not yet delivered, dead or skipped; 0 when none waits.',
    registers: [registry],
    async collect() {
      const oldest = await oldestPending.read();
      if (oldest === undefined) return this.reset();
      this.set(oldest ? Math.max(0, (options.clock.now().getTime() - oldest.getTime()) / 1000) : 0);
    },
  });
  const endpoints = cachedReading<EndpointCounts>(options, 'the event endpoints');
  new Gauge({
    name: 'event_endpoints',
    help: 'Event endpoints by state: enabled (sent to) or disabled (by an operator, or after failing for days).',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const counts = await endpoints.read();
      this.reset();
      if (!counts) return;
      this.set({ state: 'enabled' }, counts.enabled);
      this.set({ state: 'disabled' }, counts.disabled);
    },
  });
  return { readOldestFrom: oldestPending.readFrom, readEndpointsFrom: endpoints.readFrom };
}
