/**
 * How many chunks of webhook effects the worker applies at once: the first attempts taken
 * from the inbox (webhooks/inbox/dispatcher.ts) and the queue's jobs each follow it. A
 * server gets four lanes; the embedded database, with its one connection, one. Beside the
 * gateway the worker keeps to one lane while deliveries arrive (any kept in the last `arrivingMs`), so that
 * acknowledging them, what providers time out on, keeps the CPU during a burst. But not
 * for good: once its chunks have come back full for `backlogMs` (a backlog the one lane
 * does not work off), it takes every lane even while deliveries arrive, or effects would fall
 * further behind for as long as the load lasts.
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
