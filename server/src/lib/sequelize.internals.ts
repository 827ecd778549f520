import type pg from 'pg';
import type { Sequelize, Transaction } from 'sequelize';

/*
 * Fenced: Sequelize 6 has no public way to run a raw pg query on a pooled connection or on a
 * transaction's connection, and db.ts needs both (named prepared statements on the hot path,
 * pg-boss inside our transactions). These two reach into its connection manager and into a
 * transaction's `connection`; tests/internals.db.test.ts fails loudly if an upgrade moves them.
 *
 * Measured, not assumed (scripts/query-paths.ts, the session join of sessions.repo.ts, 4 at a
 * time on PostgreSQL 127.0.0.1, two runs on a loaded 2-core machine, medians of 7 rounds):
 * - the pool: a named prepared statement on a borrowed client took 60 and 76 µs; the same
 *   statement unnamed on the same client 138 and 187 µs; sequelize.query (the public way,
 *   which cannot name a statement) 201 and 257 µs. The public path would make every /me
 *   that misses the cache, every login and every webhook ingest pay about 3.4 times as much
 *   per statement.
 * - a transaction: a one-statement transaction took 307 and 359 µs on the transaction's own
 *   connection, 347 and 491 µs through sequelize.query({ transaction }). The public path could
 *   carry pg-boss's adapter too; it stays on the connection because the fence is needed for
 *   the pool anyway, and there it costs 13% and 37% less.
 */

export type PooledClient = pg.Client & { uuid?: string };

/** Borrow and return a connection of Sequelize's own pool. */
export function poolOf(sequelize: Sequelize): { acquire(): Promise<PooledClient>; release(client: PooledClient): void } {
  const manager = sequelize.connectionManager as unknown as {
    getConnection(options?: object): Promise<PooledClient>;
    releaseConnection(connection: PooledClient): void;
  };
  return {
    acquire: () => manager.getConnection({ type: 'write' }),
    release: (client) => manager.releaseConnection(client),
  };
}

/** The pg client a managed transaction runs on. */
export function connectionOf(transaction: Transaction): PooledClient {
  return (transaction as unknown as { connection: PooledClient }).connection;
}
