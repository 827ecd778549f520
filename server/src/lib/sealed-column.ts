import type { Queryable } from './db.ts';

/** One sealed value of a column and the key of its row (the row it is bound to). */
export type SealedValue = { key: string | number; value: string };

/**
 * A column of sealed values as its owner's repo offers it to the jobs that cross tables (the
 * DATA_KEY check, `secrets reencrypt`): each statement stands in the owner's file, literal,
 * so no job builds SQL on a table it does not own. `pattern` is a LIKE pattern of the values
 * already under the current key, which the pages and the count pass over.
 */
export type SealedColumn = {
  /** `<table>.<column>`: the place its values are bound to (lib/crypto.ts). */
  readonly place: string;
  /** Set when each value has a lookup hash, keyed with DATA_KEY too, that must move with it (an API key). */
  readonly movesLookupHash?: true;
  /** Any one value, to try a key on. */
  sample(db: Queryable): Promise<SealedValue | undefined>;
  countNotLike(db: Queryable, pattern: string): Promise<number>;
  /** Up to `limit` values not like `pattern`, in row-key order after `after`. */
  pageNotLike(db: Queryable, pattern: string, after: string | number | null, limit: number): Promise<SealedValue[]>;
  /** Writes `resealed` (and its new lookup hash) over `row.value`, only if the row still holds it. */
  reseal(db: Queryable, row: SealedValue, resealed: string, lookupHash?: Buffer): Promise<void>;
};

/** The owner's statements on one sealed column; rows come back as `key` and `value`. */
export type SealedColumnStatements = {
  /** Any one value that is not null. */
  sample: string;
  /** `count` of the values not like $1. */
  countNotLike: string;
  /** Up to $3 values not like $1, in row-key order after $2 (null: from the first). */
  pageNotLike: string;
  /** $2 in place of $3 in the row keyed $1 (and $4 as its lookup hash, for a column that moves one). */
  reseal: string;
};

export function sealedColumn(place: string, sql: SealedColumnStatements, options: { movesLookupHash?: true } = {}): SealedColumn {
  return {
    place,
    ...options,
    async sample(db) {
      const [row] = await db.query<SealedValue>(sql.sample);
      return row;
    },
    async countNotLike(db, pattern) {
      const [row] = await db.query<{ count: string }>(sql.countNotLike, [pattern]);
      return Number(row.count);
    },
    pageNotLike: (db, pattern, after, limit) => db.query<SealedValue>(sql.pageNotLike, [pattern, after, limit]),
    async reseal(db, row, resealed, lookupHash) {
      if (Boolean(options.movesLookupHash) !== Boolean(lookupHash)) throw new Error(`${place}: a lookup hash moves with its value, and only then`);
      await db.query(sql.reseal, lookupHash ? [row.key, resealed, row.value, lookupHash] : [row.key, resealed, row.value]);
    },
  };
}

export const placeOf = (sealed: SealedColumn, row: string | number) => ({ column: sealed.place, row });
