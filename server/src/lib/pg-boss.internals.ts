import { createRequire } from 'node:module';

/**
 * Fenced: pg-boss's own SQL builders, from its private `src/plans.js`, so the queue adapter
 * can recognise the two statements that record a job's outcome (tests/internals.db.test.ts
 * fails loudly if an upgrade moves or renames them).
 */
const plans = createRequire(import.meta.url)('pg-boss/src/plans.js') as Record<'completeJobs' | 'failJobsById', (schema: string) => string>;

/** The exact SQL text pg-boss sends to complete or fail jobs in `schema`. */
export function outcomeStatements(schema: string): Set<string> {
  return new Set([plans.completeJobs(schema), plans.failJobsById(schema)]);
}
