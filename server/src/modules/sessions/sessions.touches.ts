import type { Deps } from '../../deps.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Queryable } from '../../lib/db.ts';
import type { Logger } from '../../lib/logger.ts';
import { writeLastUses } from './sessions.repo.ts';

/** A session's use is written at most this often, whatever the traffic. */
const TOUCH_GAP_MS = 60_000;

export interface SessionTouches {
  /** Notes that a session was just used: memory only, nothing is written on the request's path. */
  touch(sessionId: string): void;
  /**
   * The latest use noted here and not written yet, for a listing made before the next flush
   * and for the idle check (SESSION_IDLE_TIMEOUT).
   */
  pending(sessionId: string): Date | undefined;
  /** Writes what was noted: one statement for every session. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left. */
  stop(): Promise<void>;
}

/**
 * `last_used_at` without a database write on /me: uses are noted in memory and written by a
 * timer, a session at most once a minute. The migration's trigger ignores such writes, so
 * they do not evict the /me cache of every instance. A use made within a minute of the
 * last write waits in memory for the next one instead of being dropped: the idle timeout
 * reads it from there, so a session in use is never taken for an idle one.
 */
function createSessionTouches(options: { db: Queryable; clock: Clock; logger: Logger; flushIntervalMs?: number }): SessionTouches {
  const { db, clock, logger } = options;
  /** The latest use of each session not written yet. */
  const noted = new Map<string, number>();
  /** Uses on their way to the database. */
  const writing = new Map<string, number>();
  /** The use this instance last wrote of each session, for the first minute after. */
  const written = new Map<string, number>();
  let flushing: Promise<void> | undefined;

  /** Back to `noted` unless a later use came in meanwhile. */
  const renote = (id: string, at: number) => {
    if (!noted.has(id)) noted.set(id, at);
  };

  const flush = async () => {
    const now = clock.now().getTime();
    for (const [id, at] of written) if (now - at >= TOUCH_GAP_MS) written.delete(id);
    const batch = [...noted].filter(([id]) => !written.has(id));
    if (!batch.length) return;
    for (const [id, at] of batch) {
      noted.delete(id);
      writing.set(id, at);
    }
    try {
      const stored = new Set(await writeLastUses(db, batch.map(([id]) => id), batch.map(([, at]) => new Date(at)), new Date(now)));
      for (const [id, at] of batch) {
        if (stored.has(id.toLowerCase())) written.set(id, at);
        // Written less than a minute ago by another instance or the login: tried again while
        // the use is recent. A session that is gone stops being tried the same way.
        else if (now - at < TOUCH_GAP_MS) renote(id, at);
      }
    } catch (error) {
      for (const [id, at] of batch) renote(id, at);
      throw error;
    } finally {
      for (const [id] of batch) writing.delete(id);
    }
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
      noted.set(sessionId, clock.now().getTime());
    },
    pending(sessionId) {
      const at = noted.get(sessionId) ?? writing.get(sessionId);
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

const touchesByDeps = new WeakMap<Deps, SessionTouches>();

/** The touch writer of these deps, made on first use; the deps' close writes what is left. */
export function sessionTouchesOf(deps: Deps): SessionTouches {
  let touches = touchesByDeps.get(deps);
  if (!touches) {
    const made = createSessionTouches({ db: deps.db, clock: deps.clock, logger: deps.logger });
    touchesByDeps.set(deps, made);
    deps.onClose(() => made.stop());
    touches = made;
  }
  return touches;
}
