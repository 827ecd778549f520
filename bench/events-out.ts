import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { summarize, type Measurement } from './measurement.ts';
import type { BenchContext } from './context.ts';

/** Events per round: enough that the sender's pace, not its start, decides the rate. */
const EVENTS_PER_ROUND = 4000;
/** Spread over this many accounts: each account's events go one at a time, in order. */
const ACCOUNTS = 200;

/**
 * A receiving service that answers 204 at once and notes when each event arrived. It runs
 * in the bench's process, not the service's, as a real receiver would.
 */
class Receiver {
  private arrivals: number[] = [];
  private expected = 0;
  private done: (() => void) | undefined;
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      this.arrivals.push(performance.now());
      res.writeHead(204).end();
      if (this.arrivals.length >= this.expected) this.done?.();
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/events`;
  }

  /** Resolves with the arrival times (performance.now()) once `count` events arrived, or fails after `timeoutMs`. */
  expect(count: number, timeoutMs: number): Promise<number[]> {
    this.arrivals = [];
    this.expected = count;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`events out: ${this.arrivals.length} of ${count} events arrived in ${timeoutMs} ms`)), timeoutMs);
      this.done = () => {
        clearTimeout(timer);
        resolve(this.arrivals);
      };
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let receiver: Receiver | undefined;

/**
 * Events out: EVENTS_PER_ROUND events written through the outbox in one transaction (over
 * ACCOUNTS accounts, so each account's go in order), then sent by the service's worker to a
 * local receiver that answers at once. Writing them is each change's own cost, so the clock
 * starts at the commit: the rate is events arrived per second from the commit to the last
 * arrival, p50 and p99 the time from the commit to each arrival.
 */
export async function eventsOut(bench: BenchContext): Promise<Measurement> {
  if (!receiver) {
    receiver = new Receiver();
    await bench.service.command('events-endpoint', { url: await receiver.listen() });
  }
  const arrived = receiver.expect(EVENTS_PER_ROUND, 120_000);
  await bench.service.command('emit-events', { count: EVENTS_PER_ROUND, accounts: ACCOUNTS });
  const committed = performance.now();
  const arrivals = await arrived;
  return summarize(
    arrivals.map((at) => Math.max(0, at - committed)),
    Math.max(...arrivals) - committed,
  );
}

/** Deliveries waiting for a receiver that is down, and over how many accounts. */
const DOWN_BACKLOG = 20_000;
const DOWN_ACCOUNTS = 100;

/**
 * Events out as above, beside another endpoint whose receiver has been down a while, with
 * DOWN_BACKLOG deliveries waiting for it: what the sender spends on deliveries it cannot send
 * yet is not spent on those it can. The backlog is written just before the round, as an
 * outage leaves it (the round starts once the sender has set it aside), and removed after
 * it, so the plain round sampled before and after each of these runs without it.
 */
export async function eventsOutBesideDown(bench: BenchContext): Promise<Measurement> {
  const down = await bench.service.command<string>('events-down-backlog', { count: DOWN_BACKLOG, accounts: DOWN_ACCOUNTS });
  try {
    return await eventsOut(bench);
  } finally {
    await bench.service.command('events-endpoint-delete', { id: down });
  }
}

export async function closeEventsReceiver(): Promise<void> {
  await receiver?.close();
  receiver = undefined;
}
