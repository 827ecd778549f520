import type { Deps } from './deps.ts';
import { eventEndpointRows, oldestPendingEventDeliveries } from './modules/events/index.ts';
import { PROVIDER_NAMES } from './webhooks/provider.ts';
import { countByProviderAndState } from './webhooks/inbox/repo.ts';

/**
 * Gives the gauges of metrics.ts the database readings they show on scrape (the inbox, the
 * oldest pending event, the event endpoints). Called by whatever serves /metrics, the
 * gateway or a worker-only process's port: metrics.ts itself cannot import these queries
 * (see InboxSource there).
 */
export function connectMetricReadings(deps: Pick<Deps, 'db' | 'metrics'>): void {
  const { db, metrics } = deps;
  metrics.readInboxFrom({ read: () => countByProviderAndState(db), providers: PROVIDER_NAMES });
  metrics.readEventsFrom(() => oldestPendingEventDeliveries(db));
  // Operators add endpoints by hand: a handful of rows, read at most every few seconds.
  metrics.readEndpointsFrom(async () => {
    const rows = await eventEndpointRows(db);
    const enabled = rows.filter((row) => row.enabled).length;
    return { enabled, disabled: rows.length - enabled };
  });
}
