import type { MigrationFn } from 'umzug';
import type { SecretBox } from '../lib/crypto.ts';

/** What every migration gets: SQL in the migration's transaction, and the keys of DATA_KEY. */
export type MigrationContext = {
  sql<Row = Record<string, unknown>>(text: string, values?: unknown[]): Promise<Row[]>;
  secretBox: SecretBox;
  /** DATA_KEY's raw keys, for values sealed in formats the secret box no longer opens. */
  dataKeys: Buffer[];
};

export type Migration = MigrationFn<MigrationContext>;
