import { DataTypes } from 'sequelize';
import { declareTable, notNull, primaryKey } from './model.ts';

// In a file apart: the CLI's `migrate status` reads the table without loading Sequelize.
// The statements are in migrator.ts and migration-status.ts.

/** A row of `schema_migrations`, the migrator's record of what it applied. */
export type SchemaMigrationRecord = { name: string; applied_at: Date };

export const schemaMigrationsTable = declareTable<SchemaMigrationRecord>('schema_migrations', {
  name: primaryKey(DataTypes.TEXT),
  applied_at: notNull(DataTypes.DATE, { defaultValue: DataTypes.NOW }),
});
