import type { Queryable } from './db.ts';
import type { Logger } from './logger.ts';

/**
 * Our tables whose rows are updated and deleted all day: each delivery, event sent, session
 * use and limited request leaves dead rows behind. Without vacuum they only grow, and
 * without its ANALYZE their statistics stay those of the day they were empty, which the
 * planner keeps choosing plans from. pg-boss's job table churns as much (a job per
 * delivery), but it is pg-boss's: its partitions are left to the server-wide setting.
 */
export const CHURNING_TABLES = ['event_deliveries', 'rate_limits', 'sessions', 'webhook_inbox'] as const;

export type AutovacuumState = {
  /** Autovacuum runs on this server: `autovacuum` and `track_counts` both on. */
  server: boolean;
  /** Those of CHURNING_TABLES with the storage parameter `autovacuum_enabled = false`. */
  tablesOff: string[];
};

const STATE = `SELECT current_setting('autovacuum')::boolean AND current_setting('track_counts')::boolean AS server,
  ARRAY(SELECT t.name FROM unnest($1::text[]) AS t(name)
    JOIN pg_class c ON c.oid = to_regclass(t.name)
    CROSS JOIN LATERAL pg_options_to_table(c.reloptions) AS o
    WHERE o.option_name = 'autovacuum_enabled' AND NOT o.option_value::boolean
    ORDER BY t.name) AS "tablesOff"`;

export async function autovacuumState(db: Queryable): Promise<AutovacuumState> {
  const [state] = await db.query<AutovacuumState>(STATE, [CHURNING_TABLES]);
  return state;
}

/**
 * A start-time warning when PostgreSQL will not vacuum the churning tables by itself. Nothing
 * fails at once: the tables grow and their statements slow down over days, which is why it
 * is said at every start. A failed check is logged and start goes on.
 */
export async function warnWithoutAutovacuum(db: Queryable, logger: Logger): Promise<void> {
  const state = await autovacuumState(db).catch((error: unknown) => {
    logger.warn({ err: error }, 'could not read whether autovacuum runs');
    return undefined;
  });
  if (!state) return;
  const tables = state.server ? state.tablesOff : [...CHURNING_TABLES, 'pgboss.job'];
  if (!tables.length) return;
  const why = state.server ? 'autovacuum_enabled is false for these tables' : 'autovacuum (or track_counts) is off on the database server';
  logger.warn({ tables }, `${why}: their dead rows are never cleaned up and their statistics go stale; turn autovacuum on (docs/DEPLOY.md)`);
}
