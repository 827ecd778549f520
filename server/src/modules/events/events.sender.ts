import type { Clock } from '../../lib/clock.ts';
import type { SecretBox } from '../../lib/crypto.ts';
import type { Db } from '../../lib/db.ts';
import type { Logger } from '../../lib/logger.ts';
import * as repo from './events.repo.ts';
import { previousSecretPlace, secretPlace, signedHeaders } from './events.signing.ts';
import type { AttemptLogEntry } from './events.model.ts';
import { redactedUrl, requestTarget } from './events.urls.ts';

/** What the sender works with (a subset of the service's Deps). */
export type SenderDeps = { db: Db; clock: Clock; secretBox: SecretBox; logger: Logger };

/** An attempt that has no answer within this is a failure (contract, section 12). */
export const SEND_TIMEOUT_MS = 15_000;
/** How long a delivery being sent is held: a worker that died mid-send gives it up after this. */
const LEASE_MS = SEND_TIMEOUT_MS + 5_000;
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
const IN_FLIGHT_PER_ENDPOINT = 8;
/** The sender looks for due deliveries this often when it has nothing to do. */
const POLL_MS = 200;
const FAILURE_LOG_INTERVAL_MS = 30_000;

/** When a delivery that has failed `step` attempts in a row is tried next; null when it is dead. */
export function nextAttemptAt(now: Date, step: number, random: () => number = Math.random): Date | null {
  const delay = RETRY_DELAYS_MS[step - 1];
  if (delay === undefined) return null;
  return new Date(now.getTime() + Math.round(delay * (1 + JITTER * random())));
}

/** The start of an answer's body, at most KEPT_ANSWER_BYTES, without waiting for the rest. */
async function answerStart(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < KEPT_ANSWER_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // the answer broke off: what came is enough
  } finally {
    reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, KEPT_ANSWER_BYTES).toString('utf8');
}

/** Why a request got no answer, in words that name neither the URL nor a secret. */
function failureOf(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `no answer within ${SEND_TIMEOUT_MS / 1000} s`;
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  if (cause?.code) return `connection failed (${cause.code})`;
  return 'connection failed';
}

export type SendOutcome = 'delivered' | 'retry' | 'dead';

/** What the sender tells the rest of the service: outcomes for the metrics, and an endpoint it disabled. */
export type SenderHooks = {
  onOutcome?(type: string, outcome: SendOutcome): void;
  onEndpointDisabled?(endpoint: { id: string; url: string; failingSince: Date }): Promise<void>;
};

/**
 * Sends one leased delivery and records the attempt. The signatures' timestamp is the real
 * time of the attempt, which receivers hold against their own clocks; the schedule goes by
 * the service clock.
 */
export async function sendDelivery(deps: SenderDeps, delivery: repo.DueDelivery, hooks: SenderHooks = {}): Promise<SendOutcome> {
  const sentAt = new Date();
  const secrets = [deps.secretBox.open(delivery.secret_sealed, secretPlace(delivery.endpoint_id))];
  if (delivery.previous_secret_sealed && delivery.previous_secret_until && delivery.previous_secret_until > deps.clock.now()) {
    secrets.push(deps.secretBox.open(delivery.previous_secret_sealed, previousSecretPlace(delivery.endpoint_id)));
  }
  const started = performance.now();
  let status: number | null = null;
  let error: string | null = null;
  try {
    const target = requestTarget(delivery.url);
    const response = await fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Gatehouse-Webhooks/1', ...target.headers, ...signedHeaders(delivery.event_id, sentAt, delivery.body, secrets) },
      body: delivery.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
    });
    status = response.status;
    if (status >= 200 && status < 300) {
      await response.body?.cancel().catch(() => undefined);
    } else {
      const start = await answerStart(response);
      error = `HTTP ${status}${start ? `: ${start}` : ''}`.slice(0, KEPT_ANSWER_BYTES + 16);
    }
  } catch (failure) {
    error = failureOf(failure);
  }
  const now = deps.clock.now();
  const attempt: AttemptLogEntry = { at: now.toISOString(), status, error, ms: Math.round(performance.now() - started) };
  if (error === null) {
    await repo.markDelivered(deps.db, delivery.id, status!, attempt, now);
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

export type EventSender = {
  /** Looks for due deliveries now rather than at the next poll. */
  wake(): void;
  /** Stops leasing, and waits for the requests in flight to be recorded. */
  stop(): Promise<void>;
};

/**
 * The worker's loop for events out: leases due deliveries (oldest first, each account's in
 * order per endpoint) up to IN_FLIGHT requests at once and IN_FLIGHT_PER_ENDPOINT to any one
 * endpoint, sends each as it is leased, and leases more as places free. It shares nothing
 * with the inbound webhooks but the pool, so a slow endpoint holds up neither other
 * endpoints nor the inbox.
 */
export function startEventSender(deps: SenderDeps, hooks: SenderHooks = {}): EventSender {
  const perEndpoint = new Map<string, number>();
  const running = new Set<Promise<void>>();
  let inFlight = 0;
  let leasing: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let failures = 0;
  let loggedAt = -Infinity;

  const release = (endpointId: string) => {
    inFlight--;
    const left = (perEndpoint.get(endpointId) ?? 1) - 1;
    if (left) perEndpoint.set(endpointId, left);
    else perEndpoint.delete(endpointId);
  };

  const send = (delivery: repo.DueDelivery) => {
    inFlight++;
    perEndpoint.set(delivery.endpoint_id, (perEndpoint.get(delivery.endpoint_id) ?? 0) + 1);
    const run = sendDelivery(deps, delivery, hooks)
      .then(
        () => undefined,
        (error: unknown) => {
          // The attempt could not be recorded (the database went away): the lease runs out and it goes again.
          deps.logger.warn({ err: error, delivery: delivery.id }, 'event delivery not recorded; it will be sent again');
        },
      )
      .finally(() => {
        release(delivery.endpoint_id);
        running.delete(run);
        lease();
      });
    running.add(run);
  };

  const lease = () => {
    if (stopped) return;
    if (leasing) {
      again = true;
      return;
    }
    const free = IN_FLIGHT - inFlight;
    if (free <= 0) return;
    again = false;
    const now = deps.clock.now();
    const busy = { ids: [...perEndpoint.keys()], free: [...perEndpoint.values()].map((count) => Math.max(0, IN_FLIGHT_PER_ENDPOINT - count)) };
    leasing = repo
      .leaseDue(deps.db, now, new Date(now.getTime() + LEASE_MS), free, IN_FLIGHT_PER_ENDPOINT, busy)
      .then(
        (due) => {
          if (failures) deps.logger.info({ failures }, 'event sending works again');
          failures = 0;
          for (const delivery of due) send(delivery);
          if (due.length === free) again = true;
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
  return {
    wake: lease,
    async stop() {
      stopped = true;
      clearInterval(timer);
      // A lease under way may still start sends: wait for it, then for every send it started.
      while (leasing || running.size) await Promise.allSettled([leasing, ...running]);
    },
  };
}
