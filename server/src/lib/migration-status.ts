import type { Queryable } from './db.ts';
import type { SchemaMigrationRecord } from './schema-migrations.model.ts';

// schema_migrations, the migrator's record of what it applied: made by migrator.ts (which
// holds the statements umzug's storage runs), read here, where a start looks first.

/** Whether every named migration is recorded as applied; throws if none ever was (no table). */
export async function migrationsApplied(db: Queryable, names: string[]): Promise<boolean> {
  const rows = await db.query<{ count: string }>(
    { name: 'migrations_applied', text: 'SELECT count(*) FROM schema_migrations WHERE name = ANY($1)' },
    [names],
  );
  return Number(rows[0]?.count) === names.length;
}

/** What schema_migrations records, by name; a database never migrated has no such table, and none is made. */
export async function appliedMigrations(db: Queryable): Promise<Map<string, Date>> {
  const [table] = await db.query<{ present: boolean }>(`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`);
  if (!table.present) return new Map();
  const rows = await db.query<SchemaMigrationRecord>('SELECT name, applied_at FROM schema_migrations ORDER BY name');
  return new Map(rows.map((row) => [row.name, row.applied_at]));
}
