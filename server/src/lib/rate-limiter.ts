import { isIPv6 } from 'node:net';
import { DataTypes } from 'sequelize';
import type { Clock } from './clock.ts';
import type { Queryable } from './db.ts';
import { declareTable, notNull, primaryKey } from './model.ts';

export type RateRule = { name: string; limit: number; windowSeconds: number };

export type RateCheck = { rule: RateRule; key: string };

/**
 * A refusal names the rule that refused (the one with the longest wait, if several did).
 * `report()` is for a caller that acts on it: the limiter's `onRefusal` hears of it (metrics).
 * A caller that only probes a limit and carries on does not call it.
 */
export type RateRefusal = { allowed: false; retryAfterSeconds: number; rule: string; report(): void };

export type RateDecision = { allowed: true } | RateRefusal;

export interface RateLimiter {
  /**
   * Counts one hit against each key, atomically with the check, and says whether all of
   * them are still within limits: concurrent callers can never all slip under a limit.
   */
  hit(checks: RateCheck[]): Promise<RateDecision>;
  /** Takes back one hit counted by `hit`, in the same window (a login that turned out right). */
  refund(check: RateCheck): Promise<void>;
  /** Forgets the count altogether (a password reset clears the failed logins of its account). */
  clear(check: RateCheck): Promise<void>;
}

/*
 * Fixed windows kept in PostgreSQL so the limits hold across instances. One statement per
 * check: the upsert starts a new window when the old one has ended. Written here rather than
 * taken from rate-limiter-flexible because it must run on the shared single connection of the
 * embedded database and on the injected clock, and its schema belongs in our migrations.
 */
const HIT_SQL = {
  name: 'rate_limit_hit',
  text: `INSERT INTO rate_limits AS r (key, hits, window_end)
         VALUES ($1, 1, $2::timestamptz + make_interval(secs => $3))
         ON CONFLICT (key) DO UPDATE SET
           hits = CASE WHEN r.window_end <= $2::timestamptz THEN 1 ELSE r.hits + 1 END,
           window_end = CASE WHEN r.window_end <= $2::timestamptz THEN EXCLUDED.window_end ELSE r.window_end END
         RETURNING hits, window_end`,
};
// A window that only the refunded hit opened goes away, as if nothing had been counted:
// otherwise its end, in a later Retry-After, would tell that this key had a success.
const REFUND_SQL = {
  name: 'rate_limit_refund',
  text: `WITH emptied AS (DELETE FROM rate_limits WHERE key = $1 AND hits <= 1 RETURNING key)
         UPDATE rate_limits SET hits = hits - 1
         WHERE key = $1 AND hits > 1 AND window_end > $2 AND NOT EXISTS (SELECT 1 FROM emptied)`,
};

/** A row of `rate_limits` (migration 0001): one key's window. This file owns the table. */
export type RateLimitRecord = { key: string; hits: number; window_end: Date };

export const rateLimitsTable = declareTable<RateLimitRecord>('rate_limits', {
  key: primaryKey(DataTypes.TEXT),
  hits: notNull(DataTypes.INTEGER),
  window_end: notNull(DataTypes.DATE),
});

type Row = Pick<RateLimitRecord, 'hits' | 'window_end'>;

/** Housekeeping: deletes the windows that ended before `now`; returns how many. */
export async function purgeEndedWindows(db: Queryable, now: Date): Promise<number> {
  return (await db.query('DELETE FROM rate_limits WHERE window_end < $1 RETURNING key', [now])).length;
}

export type RateLimiterOptions = {
  db: Queryable;
  clock: Clock;
  enabled: boolean;
  /** Told the rule's name of every refusal a caller reports; the limiter itself knows nothing of metrics. */
  onRefusal?: (rule: string) => void;
};

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { db, clock, enabled, onRefusal } = options;
  const decide = (rule: RateRule, row: Row | undefined, now: Date): RateDecision =>
    row && row.hits > rule.limit
      ? {
          allowed: false,
          retryAfterSeconds: Math.max(1, Math.ceil((row.window_end.getTime() - now.getTime()) / 1000)),
          rule: rule.name,
          report: () => onRefusal?.(rule.name),
        }
      : { allowed: true };
  const storageKey = ({ rule, key }: RateCheck) => `${rule.name}:${key}`;

  return {
    async hit(checks) {
      if (!enabled) return { allowed: true };
      const now = clock.now();
      let worst: RateDecision = { allowed: true };
      for (const check of checks) {
        const [row] = await db.query<Row>(HIT_SQL, [storageKey(check), now, check.rule.windowSeconds]);
        const decision = decide(check.rule, row, now);
        if (!decision.allowed && (worst.allowed || decision.retryAfterSeconds > worst.retryAfterSeconds)) worst = decision;
      }
      return worst;
    },
    async refund(check) {
      if (!enabled) return;
      await db.query(REFUND_SQL, [storageKey(check), clock.now()]);
    },
    async clear(check) {
      await db.query('DELETE FROM rate_limits WHERE key = $1', [storageKey(check)]);
    },
  };
}

/**
 * The part of a client address that rate limits count by. An IPv6 client usually holds a
 * whole /64 and can pick any address in it, so it counts as its /64; IPv4 (also written as
 * `::ffff:a.b.c.d`) counts by the address.
 */
export function rateLimitSubject(ip: string): string {
  const address = ip.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!isIPv6(address)) return address;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = address.includes('::') && tail ? tail.split(':') : [];
  // An embedded IPv4 tail is two groups, but it never reaches the first four.
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(Math.max(0, missing)).fill('0'), ...tailGroups];
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
