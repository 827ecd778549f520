import { openUnboundV1 } from '../lib/crypto.ts';
import type { Migration, MigrationContext } from './context.ts';

/**
 * Security review, findings 1, 3 and 11:
 * - a verification token carries the registration it was sent for (password hash, name,
 *   company), so the link that is used decides them, not whoever registered first;
 * - billing subscriptions are looked up by account, to give an account the best of its live ones;
 * - sealed secrets move to the v2 format, bound to their column and row, re-sealed here.
 */
export const up: Migration = async ({ context }) => {
  const { sql } = context;
  await sql(`
    ALTER TABLE email_tokens
      ADD COLUMN password_hash text,
      ADD COLUMN name text,
      ADD COLUMN company text,
      ADD CONSTRAINT email_tokens_registration_whole CHECK ((password_hash IS NULL) = (name IS NULL));
    CREATE INDEX billing_subscriptions_account_idx ON billing_subscriptions (account_id);
  `);
  await reseal(context, 'accounts', 'id', 'api_key_sealed');
  await reseal(context, 'sites', 'site_key', 'secret_sealed');
  await reseal(context, 'channels', 'id', 'bot_token_sealed');
  await reseal(context, 'channels', 'id', 'secret_sealed');
};

/** The places are spelled out here as they were when this ran; services name their own. */
async function reseal(context: MigrationContext, table: string, rowColumn: string, column: string): Promise<void> {
  const rows = await context.sql<{ row: string | number; sealed: string }>(
    `SELECT ${rowColumn} AS row, ${column} AS sealed FROM ${table} WHERE ${column} LIKE 'v1.%'`,
  );
  for (const { row, sealed } of rows) {
    const plaintext = openWithAny(context.dataKeys, sealed);
    const resealed = context.secretBox.seal(plaintext, { column: `${table}.${column}`, row });
    await context.sql(`UPDATE ${table} SET ${column} = $2 WHERE ${rowColumn} = $1`, [row, resealed]);
  }
}

function openWithAny(dataKeys: Buffer[], sealed: string): string {
  for (const key of dataKeys) {
    try {
      return openUnboundV1(key, sealed);
    } catch {
      // another key may have sealed it
    }
  }
  throw new Error('a stored secret cannot be opened with DATA_KEY: is it the key this database was made with?');
}

export const down: Migration = async () => {
  throw new Error('0004 re-sealed secrets in a format older versions cannot read; restore a backup instead');
};
