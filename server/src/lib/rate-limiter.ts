import type { Clock } from './clock.ts';
import type { Queryable } from './db.ts';

export type RateRule = { name: string; limit: number; windowSeconds: number };

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimiter {
  /** Counts one hit against each key and says whether all of them are still within limits. */
  hit(checks: Array<{ rule: RateRule; key: string }>): Promise<RateDecision>;
  /** Reads without counting (e.g. "is this account locked for failed logins"). */
  peek(rule: RateRule, key: string): Promise<RateDecision>;
  reset(rule: RateRule, key: string): Promise<void>;
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
const PEEK_SQL = {
  name: 'rate_limit_peek',
  text: 'SELECT hits, window_end FROM rate_limits WHERE key = $1 AND window_end > $2',
};

type Row = { hits: number; window_end: Date };

export function createRateLimiter(options: { db: Queryable; clock: Clock; enabled: boolean }): RateLimiter {
  const { db, clock, enabled } = options;
  const decide = (rule: RateRule, row: Row | undefined, now: Date): RateDecision =>
    row && row.hits > rule.limit
      ? { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((row.window_end.getTime() - now.getTime()) / 1000)) }
      : { allowed: true };
  const storageKey = (rule: RateRule, key: string) => `${rule.name}:${key}`;

  return {
    async hit(checks) {
      if (!enabled) return { allowed: true };
      const now = clock.now();
      let worst: RateDecision = { allowed: true };
      for (const { rule, key } of checks) {
        const [row] = await db.query<Row>(HIT_SQL, [storageKey(rule, key), now, rule.windowSeconds]);
        const decision = decide(rule, row, now);
        if (!decision.allowed && (worst.allowed || decision.retryAfterSeconds > worst.retryAfterSeconds)) worst = decision;
      }
      return worst;
    },
    async peek(rule, key) {
      if (!enabled) return { allowed: true };
      const now = clock.now();
      const [row] = await db.query<Row>(PEEK_SQL, [storageKey(rule, key), now]);
      return decide({ ...rule, limit: rule.limit - 1 }, row, now);
    },
    async reset(rule, key) {
      await db.query('DELETE FROM rate_limits WHERE key = $1', [storageKey(rule, key)]);
    },
  };
}
