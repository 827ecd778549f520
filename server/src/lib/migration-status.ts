import type { Queryable } from './db.ts';

/** Whether every named migration is recorded as applied; throws if none ever was (no table). */
export async function migrationsApplied(db: Queryable, names: string[]): Promise<boolean> {
  const rows = await db.query<{ count: string }>(
    { name: 'migrations_applied', text: 'SELECT count(*) FROM schema_migrations WHERE name = ANY($1)' },
    [names],
  );
  return Number(rows[0]?.count) === names.length;
}
