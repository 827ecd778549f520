import pg from 'pg';
import { ConnectionError, Sequelize, type Transaction } from 'sequelize';
import type { Logger } from './logger.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.ts';

/** A named query becomes a prepared statement on each connection that runs it. */
export type SqlQuery = { name?: string; text: string };

export interface Queryable {
  query<Row = Record<string, unknown>>(query: string | SqlQuery, values?: unknown[]): Promise<Row[]>;
}

export interface Tx extends Queryable {
  /** For Sequelize model calls inside the same transaction: `{ transaction: tx.sequelize }`. */
  readonly sequelize: Transaction;
  /** pg-boss's database adapter bound to this transaction, so jobs commit with the rows. */
  readonly executeSql: (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;
}

export interface Db extends Queryable {
  readonly sequelize: Sequelize;
  readonly embedded: boolean;
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** pg-boss's database adapter on the shared pool. */
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export type DbOptions = {
  databaseUrl: string | undefined;
  dataDir: string;
  poolMax?: number;
  logger: Logger;
};

type RawClient = pg.Client & { uuid?: string };

/**
 * One pool for everything: Sequelize owns it, and raw queries borrow its connections. The
 * embedded database has a single backend, so there the pool holds exactly one connection
 * and every query, transaction and pg-boss call waits its turn on it.
 */
export async function createDatabase(options: DbOptions): Promise<Db> {
  let embedded: EmbeddedPostgres | undefined;
  let url = options.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres(options.dataDir, options.logger);
    url = embedded.url;
  }
  const poolMax = embedded ? 1 : (options.poolMax ?? 20);
  const sequelize = new Sequelize(url, {
    dialect: 'postgres',
    dialectModule: pg,
    logging: false,
    pool: { max: poolMax, min: 0, idle: 10_000, acquire: 30_000, evict: 5_000 },
    dialectOptions: { application_name: 'gatehouse' },
    define: { underscored: true, timestamps: false },
  });
  const manager = sequelize.connectionManager as unknown as {
    getConnection(options?: object): Promise<RawClient>;
    releaseConnection(connection: RawClient): void;
  };

  const onClient = async <Row>(client: RawClient, query: string | SqlQuery, values?: unknown[]) => {
    const config = typeof query === 'string' ? { text: query } : query;
    const result = await client.query({ ...config, values } as pg.QueryConfig);
    return result.rows as Row[];
  };

  const query = async <Row>(q: string | SqlQuery, values?: unknown[]): Promise<Row[]> => {
    const client = await manager.getConnection({ type: 'write' });
    try {
      return await onClient<Row>(client, q, values);
    } finally {
      manager.releaseConnection(client);
    }
  };

  const executeSql = async (text: string, values?: unknown[]) => ({ rows: await query(text, values) });

  return {
    sequelize,
    embedded: Boolean(embedded),
    query,
    executeSql,
    async transaction(work) {
      return sequelize.transaction(async (transaction) => {
        const client = (transaction as unknown as { connection: RawClient }).connection;
        const tx: Tx = {
          sequelize: transaction,
          query: (q, values) => onClient(client, q, values),
          executeSql: async (text, values) => ({ rows: await onClient(client, text, values) }),
        };
        return work(tx);
      });
    },
    async ping() {
      await query('SELECT 1');
    },
    async close() {
      await sequelize.close();
      await embedded?.stop();
    },
  };
}

// PostgreSQL SQLSTATEs that mean "not now" rather than "wrong": connection exceptions
// (class 08), too many connections, and the server shutting down or starting up.
const UNAVAILABLE_SQLSTATES = new Set(['53300', '57P01', '57P02', '57P03']);
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether an error means the database could not be reached or is going away, as opposed to
 * a query it refused. Such a request deserves a 503 and a retry, not a 500. Walks the
 * wrappers Sequelize and pg put around the original error.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof ConnectionError) return true;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code))) return true;
    if (/^Connection terminated/.test(current.message)) return true;
    const wrapped = current as { parent?: unknown; original?: unknown; cause?: unknown };
    current = wrapped.parent ?? wrapped.original ?? wrapped.cause;
  }
  return false;
}
