import type pg from 'pg';
import type { Sequelize, Transaction } from 'sequelize';

/*
 * Fenced: Sequelize 6 has no public way to run a raw pg query on a pooled connection or on a
 * transaction's connection, and db.ts needs both (named prepared statements on the hot path,
 * pg-boss inside our transactions). These two reach into its connection manager and into a
 * transaction's `connection`; tests/internals.db.test.ts fails loudly if an upgrade moves them.
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
