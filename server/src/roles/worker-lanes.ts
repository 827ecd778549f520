/**
 * How many chunks of webhook effects the worker applies at once: the first attempts taken
 * from the inbox (webhooks/inbox/dispatcher.ts) and the queue's jobs each follow a policy of
 * their own. A server gets four lanes; the embedded database, with its one connection, one.
 * Beside the gateway the worker keeps to one lane while deliveries arrive (any kept in the
 * last `arrivingMs`), so that acknowledging them, what providers time out on, keeps the CPU
 * during a burst. But not for good: once its looks or batches have come back full for
 * `backlogMs` (a backlog the one lane does not work off), it takes every lane even while
 * deliveries arrive, or effects would fall further behind for as long as the load lasts.
 */
export type LanePolicy = {
  /** A delivery was kept by this process's gateway. */
  arrived(): void;
  /** A chunk of waiting rows was taken, or a batch of jobs fetched: `full` when it came back full (more may wait). */
  fetched(full: boolean): void;
  lanes(): number;
};

export const MAX_LANES = 4;

export function createLanePolicy(options: { embedded: boolean; arrivingMs: number; backlogMs: number; now?: () => number }): LanePolicy {
  const now = options.now ?? (() => performance.now());
  let lastArrival = -Infinity;
  let fullSince: number | undefined;
  return {
    arrived: () => {
      lastArrival = now();
    },
    fetched: (full) => {
      if (!full) fullSince = undefined;
      else fullSince ??= now();
    },
    lanes: () => {
      if (options.embedded) return 1;
      const at = now();
      const arriving = at - lastArrival < options.arrivingMs;
      const behind = fullSince !== undefined && at - fullSince >= options.backlogMs;
      return arriving && !behind ? 1 : MAX_LANES;
    },
  };
}

/**
 * Runs `run` over the items in order, in as many lanes at once as `lanes()` says at the start
 * and after each item (a lane above the count ends, one below it starts another). A lane that
 * fails stops the others after their item; the first failure is rethrown once all are done.
 */
export async function inLanes<T>(items: T[], lanes: () => number, run: (item: T) => Promise<unknown>, stopped: () => boolean = () => false): Promise<void> {
  let next = 0;
  let busy = 0;
  let failure: { error: unknown } | undefined;
  const running: Array<Promise<void>> = [];
  const more = () => next < items.length && !stopped() && !failure;
  const lane = async (): Promise<void> => {
    busy++;
    try {
      while (more()) {
        await run(items[next++]);
        const wanted = lanes();
        if (busy > wanted) return;
        while (busy < wanted && more()) start();
      }
    } catch (error) {
      failure ??= { error };
    } finally {
      busy--;
    }
  };
  const start = () => void running.push(lane());
  // A lane takes its first item before it yields, so each start here takes one.
  while (busy < lanes() && more()) start();
  // Lanes started meanwhile are pushed onto the array, so this waits for them too.
  for (let i = 0; i < running.length; i++) await running[i];
  if (failure) throw failure.error;
}

export function chunks<T>(items: T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}
