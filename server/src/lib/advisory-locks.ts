import type { Queryable } from './db.ts';

/**
 * Transaction-scoped advisory locks on names, taken in sorted order so two transactions
 * that need overlapping names cannot deadlock. They serialise work on a key that has no
 * row to lock yet (the first event of a payment or a subscription). With several groups,
 * each group's names are taken sorted, and the groups in the order given.
 */
export async function lockNames(tx: Queryable, ...groups: string[][]): Promise<void> {
  const names = groups.flatMap((group) => [...new Set(group)].sort());
  if (!names.length) return;
  // One round trip: unnest yields the array in order, so the locks are taken in order.
  await tx.query({ name: 'webhook_lock_names', text: 'SELECT pg_advisory_xact_lock(hashtextextended(n, 0)) FROM unnest($1::text[]) AS n' }, [names]);
}

/**
 * Tries a transaction-scoped advisory lock on each name without waiting (it never blocks, so
 * the order does not matter); returns the names another transaction holds.
 */
export async function namesHeldElsewhere(tx: Queryable, names: string[]): Promise<Set<string>> {
  if (!names.length) return new Set();
  const rows = await tx.query<{ name: string; got: boolean }>(
    { name: 'webhook_try_lock_names', text: 'SELECT n AS name, pg_try_advisory_xact_lock(hashtextextended(n, 0)) AS got FROM unnest($1::text[]) AS n' },
    [[...new Set(names)]],
  );
  return new Set(rows.filter((row) => !row.got).map((row) => row.name));
}
