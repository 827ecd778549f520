import type { Migration } from './context.ts';

/**
 * Production readiness (docs/CONFIGURATION.md, Secrets): a value sealed under DATA_KEY that every start
 * opens before serving, so a wrong key stops the start instead of turning logins into 500s.
 * Written at the first start after this migration (secrets/data-key-check.ts).
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    CREATE TABLE data_key_check (
      id          smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
      sealed      text NOT NULL,
      updated_at  timestamptz NOT NULL
    );
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql('DROP TABLE data_key_check');
};
