import { Umzug, type MigrationFn, type UmzugStorage } from 'umzug';
import type { Db, Queryable } from './db.ts';
import type { Logger } from './logger.ts';
import * as accounts from '../migrations/0001-accounts.ts';
import * as webhooks from '../migrations/0002-webhooks.ts';
import * as authNotify from '../migrations/0003-auth-notify.ts';

export type MigrationSql = (text: string) => Promise<unknown>;
export type Migration = MigrationFn<MigrationSql>;

/** Listed rather than globbed so the set is typed and the same under tsx and in a bundle. */
const MIGRATIONS: Array<{ name: string; up: Migration; down: Migration }> = [
  { name: '0001-accounts', ...accounts },
  { name: '0002-webhooks', ...webhooks },
  { name: '0003-auth-notify', ...authNotify },
];

export const MIGRATION_NAMES = MIGRATIONS.map((migration) => migration.name);

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
export async function migrate(db: Db, logger: Logger): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    const umzug = new Umzug<MigrationSql>({
      migrations: MIGRATIONS,
      // A function here is a factory to umzug, so the sql helper is returned from one.
      context: () => (text: string) => tx.query(text),
      storage: tableStorage(tx),
      logger: undefined,
    });
    const applied = await umzug.up();
    if (applied.length) logger.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
    return applied.map((m) => m.name);
  });
}

export async function migrationsApplied(db: Queryable): Promise<boolean> {
  const rows = await db.query<{ count: string }>(
    { name: 'migrations_applied', text: 'SELECT count(*) FROM schema_migrations WHERE name = ANY($1)' },
    [MIGRATION_NAMES],
  );
  return Number(rows[0]?.count) === MIGRATION_NAMES.length;
}
