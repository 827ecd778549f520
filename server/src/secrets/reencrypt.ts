import type { Deps } from '../deps.ts';
import { keyIdOf } from '../lib/crypto.ts';
import { placeOf, type SealedColumn, type SealedValue } from '../lib/sealed-column.ts';
import { apiKeyHash } from '../modules/keys/index.ts';
import { writeCheckValue } from './data-key-check.ts';
import { SEALED_COLUMNS } from './sealed-columns.ts';

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

/** What a value under the first key looks like; the rest are pending. */
const underCurrentKey = (deps: Deps) => `v2.${deps.secretBox.currentKeyId}.%`;

/** How many stored values are not yet under the first DATA_KEY. */
export async function countPendingSecrets(deps: Deps): Promise<number> {
  const counts = await Promise.all(SEALED_COLUMNS.map((sealed) => sealed.countNotLike(deps.db, underCurrentKey(deps))));
  return counts.reduce((sum, count) => sum + count, 0);
}

/**
 * Rewrites every stored secret still sealed under another key under the first DATA_KEY, and
 * each API key's lookup hash with it, a batch at a time, each row only if nobody changed it
 * meanwhile. Safe to run while the service runs (every process must already list the new key)
 * and to run again. The check value moves last, and only when every value could be read.
 * Each column's statements are its owner's (sealed-columns.ts).
 */
export async function reencryptSecrets(deps: Deps, onProgress?: ReencryptProgress): Promise<ReencryptReport> {
  const report = { reencrypted: 0, unreadable: 0 };
  for (const sealed of SEALED_COLUMNS) {
    await reencryptColumn(deps, sealed, report, () => onProgress?.(report.reencrypted + report.unreadable));
  }
  if (report.unreadable === 0) await writeCheckValue(deps.db, deps.secretBox, deps.clock.now());
  return { success: report.unreadable === 0, ...report };
}

/** Keyset order on the row key, so a value that cannot be read is passed once, not forever. */
async function reencryptColumn(deps: Deps, sealed: SealedColumn, report: { reencrypted: number; unreadable: number }, progressed: () => void): Promise<void> {
  let after: string | number | null = null;
  for (;;) {
    const rows = await sealed.pageNotLike(deps.db, underCurrentKey(deps), after, BATCH);
    for (const row of rows) {
      if (await reencryptValue(deps, sealed, row)) report.reencrypted++;
      else report.unreadable++;
    }
    progressed();
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1].key;
  }
}

async function reencryptValue(deps: Deps, sealed: SealedColumn, row: SealedValue): Promise<boolean> {
  const place = placeOf(sealed, row.key);
  let plaintext: string;
  try {
    plaintext = deps.secretBox.open(row.value, place);
  } catch {
    const [table, column] = sealed.place.split('.');
    deps.logger.warn({ table, column, row: row.key, keyId: keyIdOf(row.value) }, 'secrets reencrypt: no configured DATA_KEY opens this value; left as it is');
    return false;
  }
  // An API key is looked up by a hash keyed with DATA_KEY too: it moves with the key.
  await sealed.reseal(deps.db, row, deps.secretBox.seal(plaintext, place), sealed.movesLookupHash && apiKeyHash(deps, plaintext));
  return true;
}
