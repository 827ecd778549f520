import type { Deps } from '../deps.ts';
import { keyIdOf } from '../lib/crypto.ts';
import { apiKeyHash } from '../modules/keys/index.ts';
import { writeCheckValue } from './data-key-check.ts';
import { placeOf, SEALED_COLUMNS, type SealedColumn } from './sealed-columns.ts';

const BATCH = 500;

export type ReencryptReport = {
  success: boolean;
  /** Values now sealed under the first DATA_KEY that were not before. */
  reencrypted: number;
  /** Values no configured key opens (sealed under a key no longer listed); left as they were. */
  unreadable: number;
};

/** Told how many values have been handled so far, after each batch. */
export type ReencryptProgress = (done: number) => void;

/** How many stored values are not yet under the first DATA_KEY. */
export async function countPendingSecrets(deps: Deps): Promise<number> {
  const counts = await Promise.all(SEALED_COLUMNS.map((sealed) => countPending(deps, sealed, deps.secretBox.currentKeyId)));
  return counts.reduce((sum, count) => sum + count, 0);
}

/**
 * Rewrites every stored secret still sealed under another key under the first DATA_KEY, and
 * each API key's lookup hash with it, a batch at a time, each row only if nobody changed it
 * meanwhile. Safe to run while the service runs (every process must already list the new key)
 * and to run again. The check value moves last, and only when every value could be read.
 */
export async function reencryptSecrets(deps: Deps, onProgress?: ReencryptProgress): Promise<ReencryptReport> {
  const report = { reencrypted: 0, unreadable: 0 };
  for (const sealed of SEALED_COLUMNS) {
    await reencryptColumn(deps, sealed, report, () => onProgress?.(report.reencrypted + report.unreadable));
  }
  if (report.unreadable === 0) await writeCheckValue(deps.db, deps.secretBox, deps.clock.now());
  return { success: report.unreadable === 0, ...report };
}

const notUnder = (sealed: SealedColumn) => `${sealed.column} IS NOT NULL AND ${sealed.column} NOT LIKE $1`;

async function countPending(deps: Deps, sealed: SealedColumn, current: string): Promise<number> {
  const [row] = await deps.db.query<{ count: string }>(`SELECT count(*) AS count FROM ${sealed.table} WHERE ${notUnder(sealed)}`, [`v2.${current}.%`]);
  return Number(row.count);
}

/** Keyset order on the row key, so a value that cannot be read is passed once, not forever. */
async function reencryptColumn(deps: Deps, sealed: SealedColumn, report: { reencrypted: number; unreadable: number }, progressed: () => void): Promise<void> {
  let after: string | number | null = null;
  for (;;) {
    const rows: Array<{ key: string | number; value: string }> = await deps.db.query(
      `SELECT ${sealed.key} AS key, ${sealed.column} AS value FROM ${sealed.table}
       WHERE ${notUnder(sealed)} AND ($2::text IS NULL OR ${sealed.key} > $3) ORDER BY ${sealed.key} LIMIT ${BATCH}`,
      [`v2.${deps.secretBox.currentKeyId}.%`, after === null ? null : String(after), after],
    );
    for (const row of rows) {
      if (await reencryptValue(deps, sealed, row)) report.reencrypted++;
      else report.unreadable++;
    }
    progressed();
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1].key;
  }
}

async function reencryptValue(deps: Deps, sealed: SealedColumn, row: { key: string | number; value: string }): Promise<boolean> {
  const place = placeOf(sealed, row.key);
  let plaintext: string;
  try {
    plaintext = deps.secretBox.open(row.value, place);
  } catch {
    deps.logger.warn({ table: sealed.table, column: sealed.column, row: row.key, keyId: keyIdOf(row.value) }, 'secrets reencrypt: no configured DATA_KEY opens this value; left as it is');
    return false;
  }
  const resealed = deps.secretBox.seal(plaintext, place);
  // An API key is looked up by a hash keyed with DATA_KEY too: it moves with the key.
  const hash = sealed.table === 'accounts' && sealed.column === 'api_key_sealed' ? apiKeyHash(deps, plaintext) : undefined;
  await deps.db.query(
    `UPDATE ${sealed.table} SET ${sealed.column} = $2${hash ? ', api_key_hash = $4' : ''} WHERE ${sealed.key} = $1 AND ${sealed.column} = $3`,
    hash ? [row.key, resealed, row.value, hash] : [row.key, resealed, row.value],
  );
  return true;
}
