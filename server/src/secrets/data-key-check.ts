import { DataTypes } from 'sequelize';
import type { Clock } from '../lib/clock.ts';
import { keyIdOf, type SecretBox } from '../lib/crypto.ts';
import type { Queryable } from '../lib/db.ts';
import type { Logger } from '../lib/logger.ts';
import { StartError } from '../errors/start-error.ts';
import { declareTable, notNull, primaryKey } from '../lib/model.ts';
import { placeOf } from '../lib/sealed-column.ts';
import { SEALED_COLUMNS } from './sealed-columns.ts';

/** The one row of `data_key_check` (migration 0007): a known text sealed under the first key. This file owns the table. */
export type DataKeyCheckRecord = { id: number; sealed: string; updated_at: Date };

export const dataKeyCheckTable = declareTable<DataKeyCheckRecord>('data_key_check', {
  id: primaryKey(DataTypes.SMALLINT, { defaultValue: 1 }),
  sealed: notNull(DataTypes.TEXT),
  updated_at: notNull(DataTypes.DATE),
});

const CHECK_TEXT = 'gatehouse:data-key-check';
const CHECK_PLACE = { column: 'data_key_check.sealed', row: 1 };

const WRONG_KEY =
  'DATA_KEY: none of the configured keys opens the secrets stored in this database (it was set up with another DATA_KEY). ' +
  'Set DATA_KEY to the key it was set up with; to change keys, list the new key first and the old one after it, then run `npm run admin -- secrets reencrypt`.';

/**
 * Stops the start when no DATA_KEY opens what this database holds (docs/CONFIGURATION.md, Secrets):
 * otherwise every login would fail later, with a 500. The check value is written at the first
 * start; a database that already holds secrets but no check value (made before it existed)
 * must first open one of each kind. Warns when the check value is under a key other than the
 * first: stored secrets may still await `secrets reencrypt`.
 */
export async function checkDataKeys(db: Queryable, secretBox: SecretBox, clock: Clock, logger: Logger): Promise<void> {
  const [check] = await db.query<Pick<DataKeyCheckRecord, 'sealed'>>('SELECT sealed FROM data_key_check WHERE id = 1');
  if (check) {
    if (!opens(secretBox, check.sealed, CHECK_PLACE)) throw new StartError('DATA_KEY', WRONG_KEY);
    if (keyIdOf(check.sealed) !== secretBox.currentKeyId) {
      logger.warn('DATA_KEY: stored secrets were sealed under a key other than the first; run `npm run admin -- secrets reencrypt`, then the old key can go');
    }
    return;
  }
  for (const sealed of SEALED_COLUMNS) {
    const sample = await sealed.sample(db);
    if (sample && !opens(secretBox, sample.value, placeOf(sealed, sample.key))) throw new StartError('DATA_KEY', WRONG_KEY);
  }
  await writeCheckValue(db, secretBox, clock.now());
}

/** The check value under the first key; `secrets reencrypt` calls it once everything else is. */
export async function writeCheckValue(db: Queryable, secretBox: SecretBox, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO data_key_check (id, sealed, updated_at) VALUES (1, $1, $2)
     ON CONFLICT (id) DO UPDATE SET sealed = EXCLUDED.sealed, updated_at = EXCLUDED.updated_at`,
    [secretBox.seal(CHECK_TEXT, CHECK_PLACE), now],
  );
}

function opens(secretBox: SecretBox, sealed: string, place: { column: string; row: string | number }): boolean {
  try {
    secretBox.open(sealed, place);
    return true;
  } catch {
    return false;
  }
}
