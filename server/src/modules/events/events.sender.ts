import type { Clock } from '../../lib/clock.ts';
import type { SecretBox } from '../../lib/crypto.ts';
import type { Db } from '../../lib/db.ts';
import { createGroupCommit } from '../../lib/group-commit.ts';
import type { Logger } from '../../lib/logger.ts';
import * as repo from './events.repo.ts';
import { previousSecretPlace, secretPlace, signedHeaders } from './events.signing.ts';
import type { AttemptLogEntry } from './events.model.ts';
import { postEvent } from './events.http.ts';
import { checkTarget, RESOLVE_TIMEOUT_MS, type TargetDeps } from './events.targets.ts';
import { redactedUrl } from './events.urls.ts';

/** What the sender works with (a subset of the service's Deps). */
export type SenderDeps = TargetDeps & { db: Db; clock: Clock; secretBox: SecretBox; logger: Logger };

/** An attempt that has no answer within this is a failure (contract, section 12). */
export const SEND_TIMEOUT_MS = 15_000;
/** The longest an attempt takes: its host resolved and checked, then the request. */
const ATTEMPT_MS = RESOLVE_TIMEOUT_MS + SEND_TIMEOUT_MS;
/**
 * How long a leased delivery is held: a worker that died with it queued or mid-send gives it
 * up after this. One is sent only while its lease still covers a whole attempt and a margin,
 * so it waits in the queue QUEUE_WAIT_MS at most: an endpoint disabled meanwhile (the lease
 * statement checks) gets no request later than that.
 */
const LEASE_MARGIN_MS = 1_000;
const QUEUE_WAIT_MS = 2_000;
const LEASE_MS = ATTEMPT_MS + LEASE_MARGIN_MS + QUEUE_WAIT_MS;
/** After the n-th failed attempt the next waits RETRY_DELAYS_MS[n-1]; after the last it is dead. */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
/** Each wait is longer by up to this share, at random, so that failures do not come back in step. */
const JITTER = 0.2;
/** An endpoint with attempts and no 2xx for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;
/** A failed answer's body is kept up to this much, for the operators. */
const KEPT_ANSWER_BYTES = 1024;

/** Requests in flight at once, in all, and to one endpoint: a slow endpoint holds its own places only. */
const IN_FLIGHT = 64;
const IN_FLIGHT_PER_ENDPOINT = 32;
/** Deliveries leased ahead, in all and for one endpoint: one lease statement serves many sends. */
const PREFETCH = 512;
const PREFETCH_PER_ENDPOINT = 128;
/** The sender looks for due deliveries this often when it has nothing to do. */
const POLL_MS = 200;
const FAILURE_LOG_INTERVAL_MS = 30_000;

/** When a delivery that has failed `step` attempts in a row is tried next; null when it is dead. */
export function nextAttemptAt(now: Date, step: number, random: () => number = Math.random): Date | null {
  const delay = RETRY_DELAYS_MS[step - 1];
  if (delay === undefined) return null;
  return new Date(now.getTime() + Math.round(delay * (1 + JITTER * random())));
}

/** Why a request got no answer, in words that name neither the URL nor a secret. */
function failureOf(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${SEND_TIMEOUT_MS / 1000} s`;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[A-Z_]+$/.test(code) ? `connection failed (${code})` : 'connection failed';
}

export type SendOutcome = 'delivered' | 'retry' | 'dead';

/** What the sender tells the rest of the service: outcomes for the metrics, and an endpoint it disabled. */
export type SenderHooks = {
  onOutcome?(type: string, outcome: SendOutcome): void;
  onEndpointDisabled?(endpoint: { id: string; url: string; failingSince: Date }): Promise<void>;
};

/**
 * One attempt: where it may go checked first (events.targets.ts), then the request to that
 * address. A refused target is a failed attempt like a refused connection, and no byte of
 * any answer is read from an address that was not allowed.
 */
async function tryOnce(deps: SenderDeps, delivery: repo.DueDelivery, headers: Record<string, string>): Promise<{ status: number | null; error: string | null }> {
  try {
    const url = new URL(delivery.url);
    const target = await checkTarget(deps, url);
    if ('refused' in target) return { status: null, error: `not sent: the URL ${target.refused}` };
    const answer = await postEvent(url, target.address, headers, delivery.body, SEND_TIMEOUT_MS, KEPT_ANSWER_BYTES);
    const ok = answer.status >= 200 && answer.status < 300;
    return { status: answer.status, error: ok ? null : `HTTP ${answer.status}${answer.body ? `: ${answer.body}` : ''}` };
  } catch (failure) {
    return { status: null, error: failureOf(failure) };
  }
}

/**
 * Sends one leased delivery and records the attempt. The signatures' timestamp is the real
 * time of the attempt, which receivers hold against their own clocks; the schedule goes by
 * the service clock.
 */
export async function sendDelivery(
  deps: SenderDeps,
  delivery: repo.DueDelivery,
  markDelivered: (delivered: repo.Delivered) => Promise<void>,
  hooks: SenderHooks = {},
): Promise<SendOutcome> {
  const sentAt = new Date();
  const secrets = [deps.secretBox.open(delivery.secret_sealed, secretPlace(delivery.endpoint_id))];
  if (delivery.previous_secret_sealed && delivery.previous_secret_until && delivery.previous_secret_until > deps.clock.now()) {
    secrets.push(deps.secretBox.open(delivery.previous_secret_sealed, previousSecretPlace(delivery.endpoint_id)));
  }
  const started = performance.now();
  const headers = { 'content-type': 'application/json', 'user-agent': 'Gatehouse-Webhooks/1', ...signedHeaders(delivery.event_id, sentAt, delivery.body, secrets) };
  const { status, error } = await tryOnce(deps, delivery, headers);
  const now = deps.clock.now();
  const attempt: AttemptLogEntry = { at: now.toISOString(), status, error, ms: Math.round(performance.now() - started) };
  if (error === null) {
    await markDelivered({ id: delivery.id, status: status!, attempt });
    hooks.onOutcome?.(delivery.type, 'delivered');
    return 'delivered';
  }
  const retryAt = nextAttemptAt(now, delivery.step + 1);
  const endpoint = await repo.markFailed(deps.db, delivery.id, { status, error, attempt, retryAt }, now);
  const outcome = retryAt ? 'retry' : 'dead';
  hooks.onOutcome?.(delivery.type, outcome);
  if (endpoint?.enabled && endpoint.failing_since && now.getTime() - endpoint.failing_since.getTime() >= DISABLE_AFTER_MS) {
    const disabled = await deps.db.transaction((tx) => repo.setEndpointEnabled(tx, endpoint.id, false, now));
    if (disabled) {
      deps.logger.warn({ endpoint: endpoint.id, url: redactedUrl(endpoint.url), failingSince: endpoint.failing_since }, 'event endpoint disabled: no 2xx for five days');
      await hooks.onEndpointDisabled?.({ id: endpoint.id, url: endpoint.url, failingSince: endpoint.failing_since });
    }
  }
  return outcome;
}

/**
 * Endpoints stored before the rules of where events may go (events.targets.ts) that break
 * them, each logged as a warning at start: their sends fail until an operator changes them.
 */
async function warnAboutForbiddenEndpoints(deps: SenderDeps): Promise<void> {
  const endpoints = await repo.endpointRows(deps.db);
  await Promise.all(
    endpoints.map(async (endpoint) => {
      const target = URL.canParse(endpoint.url) ? await checkTarget(deps, new URL(endpoint.url)) : { refused: 'is not a URL' };
      if ('refused' in target) {
        deps.logger.warn({ endpoint: endpoint.id, url: redactedUrl(endpoint.url), reason: target.refused }, 'event endpoint breaks the rules of where events may go: its sends fail until its URL is changed');
      }
    }),
  );
}

export type EventSender = {
  /** Looks for due deliveries now rather than at the next poll. */
  wake(): void;
  /** Stops leasing, and waits for the requests in flight to be recorded. */
  stop(): Promise<void>;
};

/** A leased delivery waiting its turn, and until when its lease holds. */
type Queued = { delivery: repo.DueDelivery; leasedUntil: number };

/**
 * The worker's loop for events out. It leases due deliveries (soonest due first; of each
 * account only the oldest pending one per endpoint, so each account's events go in order;
 * see repo.leaseDue for what it sets aside) into a
 * queue per endpoint, up to PREFETCH_PER_ENDPOINT ahead, and sends from each queue with at
 * most IN_FLIGHT_PER_ENDPOINT requests at once (IN_FLIGHT in all). Leasing ahead makes one
 * statement serve many sends; a queued delivery whose lease no longer covers a whole
 * attempt is let go rather than sent (it is leased again later, by this worker or another),
 * so a lease never runs out while its request is under way. A slow endpoint fills its own
 * places only: neither the other endpoints nor the inbound webhooks wait for it.
 */
export function startEventSender(deps: SenderDeps, hooks: SenderHooks = {}): EventSender {
  const endpoints = new Map<string, { queue: Queued[]; inFlight: number }>();
  // An endpoint this worker disables has its queue let go at once: nothing more is sent to it.
  const senderHooks: SenderHooks = {
    ...hooks,
    async onEndpointDisabled(endpoint) {
      const state = endpoints.get(endpoint.id);
      if (state) state.queue.length = 0;
      await hooks.onEndpointDisabled?.(endpoint);
    },
  };
  // 2xx answers are recorded together: one statement for all that came in while the last one ran.
  // Each commit lets the next event of those accounts go: a lease looks for them at once.
  const markDelivered = createGroupCommit<repo.Delivered, void>(
    async (delivered) => {
      await repo.markDelivered(deps.db, delivered, deps.clock.now());
      lease();
      return delivered.map(() => undefined);
    },
    { maxBatch: 500, maxInFlight: deps.db.embedded ? 1 : 2 },
  );
  const running = new Set<Promise<void>>();
  let inFlight = 0;
  let leasing: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let failures = 0;
  let loggedAt = -Infinity;

  const endpointState = (id: string) => {
    let state = endpoints.get(id);
    if (!state) endpoints.set(id, (state = { queue: [], inFlight: 0 }));
    return state;
  };
  const held = (state: { queue: Queued[]; inFlight: number }) => state.queue.length + state.inFlight;

  const send = (endpointId: string, state: { queue: Queued[]; inFlight: number }, delivery: repo.DueDelivery) => {
    inFlight++;
    state.inFlight++;
    const run = sendDelivery(deps, delivery, markDelivered, senderHooks)
      .then(
        () => undefined,
        (error: unknown) => {
          // The attempt could not be recorded (the database went away): the lease runs out and it goes again.
          deps.logger.warn({ err: error, delivery: delivery.id }, 'event delivery not recorded; it will be sent again');
        },
      )
      .finally(() => {
        inFlight--;
        state.inFlight--;
        running.delete(run);
        pump(endpointId, state);
        if (held(state) <= PREFETCH_PER_ENDPOINT / 2) lease();
      });
    running.add(run);
  };

  /** Starts what the endpoint's places allow; drops from the queue what its lease no longer covers. */
  const pump = (endpointId: string, state: { queue: Queued[]; inFlight: number }) => {
    const latestStart = performance.now() + ATTEMPT_MS + LEASE_MARGIN_MS;
    while (!stopped && state.queue.length && state.inFlight < IN_FLIGHT_PER_ENDPOINT && inFlight < IN_FLIGHT) {
      const next = state.queue.shift()!;
      if (next.leasedUntil >= latestStart) send(endpointId, state, next.delivery);
    }
    if (!held(state)) endpoints.delete(endpointId);
  };

  const lease = () => {
    if (stopped) return;
    if (leasing) {
      again = true;
      return;
    }
    const room = PREFETCH - [...endpoints.values()].reduce((sum, state) => sum + held(state), 0);
    if (room <= 0) return;
    again = false;
    const now = deps.clock.now();
    const leasedUntil = performance.now() + LEASE_MS;
    const busy = { ids: [...endpoints.keys()], free: [...endpoints.values()].map((state) => Math.max(0, PREFETCH_PER_ENDPOINT - held(state))) };
    leasing = repo
      .leaseDue(deps.db, now, new Date(now.getTime() + LEASE_MS), room, PREFETCH_PER_ENDPOINT, busy)
      .then(
        ({ due, held }) => {
          if (failures) deps.logger.info({ failures }, 'event sending works again');
          failures = 0;
          for (const delivery of due) endpointState(delivery.endpoint_id).queue.push({ delivery, leasedUntil });
          for (const [id, state] of endpoints) pump(id, state);
          // A full lease, or one that put waiting deliveries aside, may have left more due behind them.
          if (due.length === room || held) again = true;
        },
        (error: unknown) => {
          failures++;
          const at = performance.now();
          if (failures === 1 || at - loggedAt >= FAILURE_LOG_INTERVAL_MS) {
            loggedAt = at;
            deps.logger.warn({ err: error, failures }, 'could not look for events to send; trying again');
          }
        },
      )
      .finally(() => {
        leasing = undefined;
        if (again && !failures) lease();
      });
  };

  const timer = setInterval(lease, POLL_MS);
  timer.unref();
  lease();
  // In the background: names may take a while to resolve, and sending need not wait for a warning.
  const checked = warnAboutForbiddenEndpoints(deps).catch((error: unknown) => deps.logger.warn({ err: error }, 'could not check the stored event endpoints'));
  return {
    wake: lease,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await checked;
      // A lease under way may still start sends: wait for it, then for every send it started.
      while (leasing || running.size) await Promise.allSettled([leasing, ...running]);
      // What is still queued is handed back, for another worker (or this one after a restart) at once.
      const queued = [...endpoints.values()].flatMap((state) => state.queue.map((item) => item.delivery.id));
      endpoints.clear();
      if (queued.length) await repo.releaseLeases(deps.db, queued).catch((error: unknown) => deps.logger.warn({ err: error }, 'queued event deliveries not handed back; they go when their lease runs out'));
    },
  };
}
