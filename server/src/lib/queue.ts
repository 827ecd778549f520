import PgBoss from 'pg-boss';
import type { Db } from './db.ts';
import type { Logger } from './logger.ts';
import { fetchOrderIndex, outcomeStatements } from './pg-boss.internals.ts';

export type { PgBoss };

const SCHEMA = 'pgboss';

/**
 * pg-boss runs on the shared pool through its `db` adapter: on the embedded database that
 * is the only way to reach the single backend, and on a real one it saves a second pool.
 * Only the worker role supervises (maintenance, expiry); a gateway only inserts jobs.
 */
export async function startQueue(options: { db: Db; logger: Logger; supervise: boolean; queues: PgBoss.Queue[] }): Promise<PgBoss> {
  const { db, logger, supervise, queues } = options;
  // pg-boss 10 records a job's outcome with complete() or fail() without awaiting either,
  // so a failed write would be an unhandled rejection that ends the process. The adapter
  // therefore never rejects those two statements: it logs the error and answers nothing,
  // which pg-boss reads as "no job affected". The job stays active, expires and is tried
  // again; webhook effects are idempotent, so nothing is lost or applied twice. Once pg-boss
  // has stopped (a fetch in flight can still return jobs), every statement answers nothing
  // in the same way instead of reaching a closed pool.
  const outcomeWrites = outcomeStatements(SCHEMA);
  const nothing = undefined as unknown as { rows: unknown[] };
  let stopped = false;
  const executeSql = async (text: string, values: unknown[]) => {
    if (stopped) return nothing;
    if (!outcomeWrites.has(text)) return db.executeSql(text, values);
    try {
      return await db.executeSql(text, values);
    } catch (error) {
      logger.warn({ err: error }, 'could not record a job outcome; the job will expire and run again');
      return nothing;
    }
  };
  const boss = new PgBoss({
    db: { executeSql },
    schema: SCHEMA,
    supervise,
    schedule: false,
    migrate: true,
    // Completed jobs are only bookkeeping (the inbox row is the record): archive them
    // after an hour instead of 12 h so the job table stays small under webhook load.
    archiveCompletedAfterSeconds: 3600,
  });
  boss.on('error', (error) => logger.error({ err: error }, 'job queue error'));
  boss.on('stopped', () => (stopped = true));
  await boss.start();
  await db.executeSql(fetchOrderIndex(SCHEMA), []);
  for (const queue of queues) {
    const { name, ...settings } = queue;
    const existing = await boss.getQueue(name);
    if (!existing) await boss.createQueue(name, { name, ...settings });
    // Settings are code, not data: a changed policy reaches queues created by older builds.
    else await boss.updateQueue(name, { name, ...settings });
  }
  return boss;
}

/** pg-boss's database adapter bound to a transaction, so jobs commit or roll back with its rows. */
export function inTransaction(tx: { executeSql: PgBoss.Db['executeSql'] }): { db: PgBoss.Db } {
  return { db: { executeSql: tx.executeSql } };
}
