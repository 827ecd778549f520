import type { Clock } from '../../lib/clock.ts';
import type { Queryable } from '../../lib/db.ts';
import type { Logger } from '../../lib/logger.ts';

/** A session's use is written at most this often, whatever the traffic. */
const TOUCH_GAP_MS = 60_000;

export interface SessionTouches {
  /** Notes that a session was just used: memory only, nothing is written on the request's path. */
  touch(sessionId: string): void;
  /** The use noted here and not written yet, for a listing made before the next flush. */
  pending(sessionId: string): Date | undefined;
  /** Writes what was noted: one statement for every session. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left. */
  stop(): Promise<void>;
}

const TOUCH_SQL = {
  name: 'sessions_touch',
  // The condition makes "once a minute" hold across instances too.
  text: `UPDATE sessions s SET last_used_at = t.at
         FROM unnest($1::uuid[], $2::timestamptz[]) AS t(id, at)
         WHERE s.id = t.id AND (s.last_used_at IS NULL OR s.last_used_at <= t.at - interval '1 minute')`,
};

/**
 * `last_used_at` without a database write on /me: uses are noted in memory and written by a
 * timer, a session at most once a minute. The migration's trigger ignores such writes, so
 * they do not evict the /me cache of every instance.
 */
export function createSessionTouches(options: { db: Queryable; clock: Clock; logger: Logger; flushIntervalMs?: number }): SessionTouches {
  const { db, clock, logger } = options;
  const noted = new Map<string, number>();
  const written = new Map<string, number>();
  let flushing: Promise<void> | undefined;

  const flush = async () => {
    if (!noted.size) return;
    const batch = [...noted];
    noted.clear();
    await db.query(TOUCH_SQL, [batch.map(([id]) => id), batch.map(([, at]) => new Date(at))]);
    const now = clock.now().getTime();
    for (const [id, at] of batch) written.set(id, at);
    for (const [id, at] of written) if (now - at >= TOUCH_GAP_MS) written.delete(id);
  };
  const runFlush = () => {
    flushing ??= flush()
      .catch((error) => logger.warn({ err: error }, 'session use could not be recorded'))
      .finally(() => (flushing = undefined));
    return flushing;
  };
  const timer = setInterval(runFlush, options.flushIntervalMs ?? 5_000).unref();

  return {
    touch(sessionId) {
      const now = clock.now().getTime();
      const last = written.get(sessionId);
      if (last === undefined || now - last >= TOUCH_GAP_MS) noted.set(sessionId, now);
    },
    pending(sessionId) {
      const at = noted.get(sessionId);
      return at === undefined ? undefined : new Date(at);
    },
    flush: runFlush,
    async stop() {
      clearInterval(timer);
      await flushing;
      await runFlush();
    },
  };
}
