import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Deps } from '../server/src/deps.ts';
import { systemClock } from '../server/src/lib/clock.ts';
import { createSignal } from '../server/src/lib/signal.ts';
import { createMetrics } from '../server/src/metrics.ts';
import { createLanePolicy } from '../server/src/lib/lanes.ts';
import { dispatchRetryDelayMs, startInboxDispatcher } from '../server/src/webhooks/inbox/dispatcher.ts';
import { eventually } from './helpers/wait.ts';

// The inbox dispatcher while its database is away: it backs off instead of trying every
// tick, says so once per failing streak, and says when it works again. No database, no
// service: a stand-in database that fails on demand, and the dispatcher's own timer.

const test = suite('webhooks/inbox dispatcher: woken by commits beside the gateway, backing off while dispatch fails');

test('the wait after each failure in a row doubles from 200 ms and stays at 5 s', () => {
  assert.equal([1, 2, 3, 4, 5, 6, 7, 8].map(dispatchRetryDelayMs), [200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
  // A streak of a day is still one try every 5 s (2 ** 2000 is Infinity in a double).
  assert.is(dispatchRetryDelayMs(2000), 5000);
});

type Logged = { level: string; fields: Record<string, unknown>; message: string };

/** What the dispatcher reads of its deps: a stand-in database, the real clock, signal and metrics, a logger. */
function standInDeps(db: unknown, logger: Record<'warn' | 'info' | 'error', (...args: any[]) => void>): Deps {
  const metrics = createMetrics({ clock: systemClock, logger: logger as unknown as Deps['logger'] });
  return { db, clock: systemClock, queue: {}, inboxKept: createSignal(), logger, metrics } as unknown as Deps;
}

/** The failed tries that the dispatcher counted in its metrics. */
async function countedFailures(deps: Deps): Promise<number> {
  return (await deps.metrics.registry.getSingleMetric('inbox_dispatch_failures_total')!.get()).values[0]?.value ?? 0;
}

const serverLanes = () => createLanePolicy({ embedded: false, arrivingMs: 250, backlogMs: 2_000 });

/** A dispatcher on a database that throws while `failing.now` and otherwise finds no row to dispatch. */
function startOnFlakyDatabase(failing: { now: boolean }) {
  const tries: Array<{ at: number; failed: boolean }> = [];
  const logged: Logged[] = [];
  const log = (level: string) => (fields: Record<string, unknown>, message: string) => void logged.push({ level, fields, message });
  // A dispatch starts with a look for waiting rows, one query.
  const db = {
    async query(): Promise<unknown[]> {
      tries.push({ at: performance.now(), failed: failing.now });
      if (failing.now) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return [];
    },
  };
  const deps = standInDeps(db, { warn: log('warn'), info: log('info'), error: log('error') });
  const dispatcher = startInboxDispatcher(deps, { besideGateway: false, lanes: serverLanes() });
  return { tries, logged, dispatcher, deps };
}

test('a failing dispatch waits out its backoff before each new try; one warning a streak, one line when it works again', async () => {
  const failing = { now: true };
  const { tries, logged, dispatcher, deps } = startOnFlakyDatabase(failing);
  try {
    await eventually('a second failed try', () => tries.length >= 2);
    failing.now = false;
    await eventually('a try that works', () => tries.some((one) => !one.failed));
    await eventually('the recovery logged', () => logged.some((line) => line.level === 'info'));

    const [first, second, third] = tries;
    assert.ok(second.at - first.at >= dispatchRetryDelayMs(1), `tried again after ${second.at - first.at} ms`);
    assert.ok(third.at - second.at >= dispatchRetryDelayMs(2), `tried again after ${third.at - second.at} ms`);
    assert.equal(
      logged.map(({ level, fields, message }) => [level, fields.failures, message]),
      [
        ['warn', 1, 'inbox dispatch failed; trying again with backoff'],
        ['info', 2, 'inbox dispatch works again'],
      ],
    );
    assert.match(String(logged[0].fields.err), 'ECONNREFUSED', 'the warning carries the cause');
    // Every failed try is counted, where the log said it once.
    assert.is(await countedFailures(deps), tries.filter((one) => one.failed).length);

    // Working again ends the streak: the next failure is the first of a new one.
    failing.now = true;
    const before = tries.length;
    await eventually('a new failure', () => tries.length > before && tries.at(-1)!.failed);
    await eventually('the new streak warned', () => logged.length === 3);
    assert.equal(logged[2].fields.failures, 1);
  } finally {
    await dispatcher.stop();
  }
});

/**
 * A dispatcher beside the gateway, on a database whose looks for waiting rows each wait for
 * `release()` and find none: `tries` holds when each began.
 */
function startBesideGateway() {
  const tries: number[] = [];
  let release = () => {};
  const db = {
    async query(): Promise<unknown[]> {
      tries.push(performance.now());
      await new Promise<void>((resolve) => (release = resolve));
      return [];
    },
  };
  const deps = standInDeps(db, { warn() {}, info() {}, error() {} });
  const dispatcher = startInboxDispatcher(deps, { besideGateway: true, lanes: serverLanes() });
  return { deps, dispatcher, tries, release: () => release() };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
/** The dispatcher's spacing under load, and its poll beside the gateway (dispatcher.ts). */
const SPACING_MS = 100;
const POLL_MS = 1_000;
const sinceLast = (tries: number[]) => performance.now() - tries.at(-1)!;

test('beside the gateway, rows kept in this process are dispatched at once, or 100 ms after the last dispatch began, not at the next poll', async () => {
  const { deps, dispatcher, tries, release } = startBesideGateway();
  try {
    assert.is(tries.length, 1, 'a first look at start');
    release();
    await settle();
    // Right after a dispatch: the next waits out the spacing, so a burst is dispatched in batches.
    deps.inboxKept.notify();
    assert.is(tries.length, 1, 'not at once, within 100 ms of the last');
    await eventually('the spaced dispatch', () => tries.length === 2);
    const gap = tries[1] - tries[0];
    // About SPACING_MS (the timer counts from just before the last transaction began), far from the poll.
    assert.ok(gap >= SPACING_MS / 2 && gap < POLL_MS, `dispatched ${gap.toFixed(0)} ms after the last`);
    release();
    await settle();
    // Idle for longer than the spacing: a commit is dispatched there and then.
    await eventually('the spacing over', () => sinceLast(tries) >= SPACING_MS);
    deps.inboxKept.notify();
    assert.is(tries.length, 3, 'the commit that kept rows started a dispatch there and then');
  } finally {
    release();
    await dispatcher.stop();
  }
});

test('rows kept while a dispatch runs get a dispatch of their own right after it', async () => {
  const { deps, dispatcher, tries, release } = startBesideGateway();
  try {
    await eventually('the spacing over', () => sinceLast(tries) >= SPACING_MS);
    // Kept after the running dispatch looked: that look cannot have seen them.
    deps.inboxKept.notify();
    deps.inboxKept.notify();
    assert.is(tries.length, 1, 'one dispatch at a time');
    release();
    await settle();
    assert.is(tries.length, 2, 'one more dispatch for both wake-ups');
    release();
    await settle();
    assert.is(tries.length, 2, 'and no more');
  } finally {
    release();
    await dispatcher.stop();
  }
});

test.run();
