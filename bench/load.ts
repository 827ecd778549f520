import autocannon from 'autocannon';
import type { Measurement } from './measurement.ts';

export type LoadOptions = {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Per-request changes, e.g. a fresh signed body per delivery. */
  setupRequest?: autocannon.Request['setupRequest'];
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** This many requests instead of a duration, and no warm-up. */
  amount?: number;
};

function cannon(options: LoadOptions, duration: number) {
  return autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    requests: options.setupRequest ? [{ setupRequest: options.setupRequest }] : undefined,
    connections: options.connections,
    ...(options.amount ? { amount: options.amount } : { duration }),
  });
}

/** Requests that did not get a 2xx: errors, timeouts and other statuses. */
export const failuresOf = (result: autocannon.Result) => result.errors + result.timeouts + result.non2xx;

/**
 * Warm-up (JIT, prepared statements, pool connections), then the measured run. Any error or
 * non-2xx answer fails the scenario: a fast 401 is not a fast /me.
 */
export async function runLoad(options: LoadOptions): Promise<Measurement> {
  if (options.warmupSeconds > 0 && !options.amount) await cannon(options, options.warmupSeconds);
  const result = await cannon(options, options.durationSeconds);
  const failures = failuresOf(result);
  if (failures > 0) {
    throw new Error(`${options.method ?? 'GET'} ${options.url}: ${failures} of ${result.requests.total} requests failed (${JSON.stringify(result.statusCodeStats)})`);
  }
  // Total over duration rather than the per-second samples' mean: a 1 s run has one sample at most.
  const rate = result.requests.total / result.duration;
  return { rate, p50: result.latency.p50, p99: result.latency.p99, count: result.requests.total };
}
