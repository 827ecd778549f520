import { Umzug, type MigrationFn, type UmzugStorage } from 'umzug';
import type { Db, Queryable } from './db.ts';
import type { Logger } from './logger.ts';

/** One migration; `C` is what the application hands every migration (SQL, keys). */
export type Migration<C extends object> = { name: string; up: MigrationFn<C>; down: MigrationFn<C> };

const LOCK_ID = 7_320_001;

function tableStorage(sql: Queryable): UmzugStorage {
  return {
    async executed() {
      await sql.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      const rows = await sql.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
      return rows.map((row) => row.name);
    },
    async logMigration({ name }) {
      await sql.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
    },
    async unlogMigration({ name }) {
      await sql.query('DELETE FROM schema_migrations WHERE name = $1', [name]);
    },
  };
}

/**
 * All pending migrations run in one transaction under an advisory lock, so instances that
 * start together apply them once, and a failed migration leaves nothing half-done.
 */
export async function migrate<C extends object>(db: Db, logger: Logger, migrations: Array<Migration<C>>, context: (tx: Queryable) => C): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    const umzug = new Umzug<C>({
      migrations,
      // A function here is a factory to umzug, so the context is returned from one.
      context: () => context(tx),
      storage: tableStorage(tx),
      logger: undefined,
    });
    const applied = await umzug.up();
    if (applied.length) logger.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
    return applied.map((m) => m.name);
  });
}
