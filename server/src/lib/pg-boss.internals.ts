import { createRequire } from 'node:module';

/**
 * Fenced: pg-boss's own SQL builders, from its private `src/plans.js`, so the queue adapter
 * can recognise the two statements that record a job's outcome, and its table and fetch order,
 * which fetchOrderIndex serves (tests/internals.db.test.ts fails loudly if an upgrade moves
 * or renames them, or fetches in another order).
 */
const plans = createRequire(import.meta.url)('pg-boss/src/plans.js') as Record<'completeJobs' | 'failJobsById', (schema: string) => string> & {
  fetchNextJob(schema: string): (options: { includeMetadata?: boolean; priority?: boolean }) => string;
};

/** The exact SQL text pg-boss sends to complete or fail jobs in `schema`. */
export function outcomeStatements(schema: string): Set<string> {
  return new Set([plans.completeJobs(schema), plans.failJobsById(schema)]);
}

/** The exact SQL text of pg-boss's fetch as `work()` sends it with its default options. */
export function fetchStatement(schema: string): string {
  return plans.fetchNextJob(schema)({ includeMetadata: false, priority: true });
}

/**
 * An index that serves pg-boss 10's fetch in its own order. The fetch takes a batch of a
 * queue's jobs whose state is before `active`, `ORDER BY priority desc, created_on, id`; the
 * index pg-boss makes for it is on `(name, start_after)`, so every fetch read and sorted
 * every waiting job of the queue. A worker that fell behind then fell further behind: in
 * the 30-minute soak 300,000 deliveries waited, a fetch took 0.5 s (and spilled its sort to
 * disk), and the backlog drained at 250 a second. With this index a fetch reads its batch in
 * order and stops: 0.2 ms at the same backlog, and the drain ran at 2,000 a second.
 *
 * Built on the partitioned table, so every queue's partition has it, those made later too.
 * The first build locks the job table against writes while it runs (about half a second per
 * million jobs). Later starts look it up in the catalog and stop there: `CREATE INDEX IF NOT
 * EXISTS` alone takes that lock even when the index exists, so every start would wait behind
 * any transaction writing jobs, and hold up the writes queued behind it. The advisory lock
 * keeps two processes that start at once from building it twice.
 */
export function fetchOrderIndex(schema: string): string {
  return `DO $$ BEGIN
    IF to_regclass('${schema}.job_fetch_order') IS NULL THEN
      PERFORM pg_advisory_xact_lock(hashtext('gatehouse:${schema}.job_fetch_order'));
      CREATE INDEX IF NOT EXISTS job_fetch_order ON ${schema}.job (name, priority DESC, created_on, id) WHERE state < 'active';
    END IF;
  END $$`;
}
