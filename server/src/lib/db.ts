import pg from 'pg';
import { ConnectionError, Sequelize, type Model, type ModelStatic } from 'sequelize';
import type { EmbeddedPostgres } from './embedded-postgres.ts';
import type { Logger } from './logger.ts';
import type { TableModel } from './model.ts';
import { connectionOf, poolOf, type PooledClient } from './sequelize.internals.ts';

/** The embedded database is a development dependency: an install without them has none. */
export class EmbeddedDatabaseMissing extends Error {
  constructor() {
    super('the embedded database is not installed here (a production install leaves it out)');
    this.name = 'EmbeddedDatabaseMissing';
  }
}

/** A named query becomes a prepared statement on each connection that runs it. */
export type SqlQuery = { name?: string; text: string };

export interface Queryable {
  query<Row = Record<string, unknown>>(query: string | SqlQuery, values?: unknown[]): Promise<Row[]>;
}

export interface Tx extends Queryable {
  /** pg-boss's database adapter bound to this transaction, so jobs commit with the rows. */
  readonly executeSql: (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;
}

export interface Db extends Queryable {
  readonly embedded: boolean;
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** pg-boss's database adapter on the shared pool. */
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  /** A table's model (lib/model.ts) on this database's Sequelize: what it knows of the columns. */
  define<Row extends object>(table: TableModel<Row>): ModelStatic<Model<Row>>;
  close(): Promise<void>;
}

export type DbOptions = {
  databaseUrl: string | undefined;
  dataDir: string;
  poolMax?: number;
  logger: Logger;
};

/**
 * One pool for everything: Sequelize owns it, and raw queries borrow its connections. The
 * embedded database has a single backend, so there the pool holds exactly one connection
 * and every query, transaction and pg-boss call waits its turn on it.
 */
export async function createDatabase(options: DbOptions): Promise<Db> {
  let embedded: EmbeddedPostgres | undefined;
  let url = options.databaseUrl;
  if (!url) {
    // Loaded only here: a deployment on a database server (the production image) does not
    // install the embedded one at all.
    const { startEmbeddedPostgres } = await import('./embedded-postgres.ts').catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ERR_MODULE_NOT_FOUND' ? new EmbeddedDatabaseMissing() : error;
    });
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
  const pool = poolOf(sequelize);

  const onClient = async <Row>(client: PooledClient, query: string | SqlQuery, values?: unknown[]) => {
    const config = typeof query === 'string' ? { text: query } : query;
    const result = await client.query({ ...config, values } as pg.QueryConfig);
    return result.rows as Row[];
  };

  const query = async <Row>(q: string | SqlQuery, values?: unknown[]): Promise<Row[]> => {
    const client = await pool.acquire();
    try {
      return await onClient<Row>(client, q, values);
    } finally {
      pool.release(client);
    }
  };

  const executeSql = async (text: string, values?: unknown[]) => ({ rows: await query(text, values) });

  return {
    embedded: Boolean(embedded),
    query,
    executeSql,
    define: (table) => table.define(sequelize),
    async transaction(work) {
      return sequelize.transaction(async (transaction) => {
        const client = connectionOf(transaction);
        const tx: Tx = {
          query: (q, values) => onClient(client, q, values),
          executeSql: async (text, values) => ({ rows: await onClient(client, text, values) }),
        };
        return work(tx);
      });
    },
    async close() {
      await sequelize.close();
      await embedded?.stop();
    },
  };
}

/** The error and the ones Sequelize and pg wrapped in it (`parent`, `original`, `cause`), outermost first. */
function* wrappedErrors(error: unknown): Generator<Error & { code?: unknown }> {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    yield current;
    const wrapped = current as { parent?: unknown; original?: unknown; cause?: unknown };
    current = wrapped.parent ?? wrapped.original ?? wrapped.cause;
  }
}

/**
 * A value PostgreSQL refused as data (SQLSTATE class 22: NUL or invalid text, a number out
 * of range, a malformed uuid): the request's fault, not the service's.
 */
export function isRefusedValue(error: unknown): boolean {
  for (const current of wrappedErrors(error)) {
    if (typeof current.code === 'string' && /^22[0-9A-Z]{3}$/.test(current.code)) return true;
  }
  return false;
}

// PostgreSQL SQLSTATEs that mean "not now" rather than "wrong": connection exceptions
// (class 08), too many connections, and the server shutting down or starting up.
const UNAVAILABLE_SQLSTATES = new Set(['53300', '57P01', '57P02', '57P03']);
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether an error means the database could not be reached or is going away, as opposed to
 * a query it refused. Such a request deserves a 503 and a retry, not a 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const current of wrappedErrors(error)) {
    if (current instanceof ConnectionError) return true;
    const code = current.code;
    if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code))) return true;
    if (/^Connection terminated/.test(current.message)) return true;
  }
  return false;
}
