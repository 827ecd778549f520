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
