import type { Queryable } from '../../lib/db.ts';
import { inBatches } from '../../lib/batches.ts';
import { deleteDeliveredBefore } from './events.repo.ts';

/**
 * Retention: delivered deliveries finished before `before`, and events older than that which
 * no delivery needs any more, a thousand rows per statement. Dead and skipped deliveries stay
 * for a person to retry or for the endpoint's removal. Returns how many rows went.
 */
export function purgeDeliveredEvents(db: Queryable, before: Date, batch = 1000): Promise<number> {
  return inBatches(() => deleteDeliveredBefore(db, before, batch), batch);
}
