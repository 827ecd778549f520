import type { Deps } from '../deps.ts';
import { inBatches } from '../lib/batches.ts';
import { purgeEndedWindows } from '../lib/rate-limiter.ts';
import { purgeAuditEvents } from '../modules/activity/index.ts';
import { purgeDeliveredEvents } from '../modules/events/index.ts';
import { purgeExpiredLinkTickets } from '../modules/identities/index.ts';
import { dropExpiredPreviousKeys } from '../modules/keys/index.ts';
import { purgeExpiredMfaState } from '../modules/mfa/index.ts';
import { deleteDeliveries } from '../webhooks/inbox/repo.ts';

const DAY_MS = 24 * 3600 * 1000;

const INBOX_PURGE_BATCH = 1000;

export type HousekeepingReport = { rateLimits: number; auditEvents: number; previousKeys: number; deliveries: number; events: number; mfaChallenges: number; linkTickets: number };

/**
 * What the worker tidies every minute, on the service clock: rate-limit windows that ended,
 * activity older than AUDIT_RETENTION_DAYS, processed and ignored deliveries older than
 * INBOX_RETENTION_DAYS (dead ones stay for a person: `npm run admin -- inbox purge`), events
 * out delivered as long ago (with the events no delivery needs any more), and
 * previous API keys whose grace window ended (they stopped working then; this drops their
 * lookup hash), second-factor challenges and step-ups that ran out, and tickets to connect
 * an identity provider that nobody used. Deletes go a
 * thousand rows per statement.
 */
export async function runHousekeeping(deps: Deps): Promise<HousekeepingReport> {
  const now = deps.clock.now();
  const rateLimits = await purgeEndedWindows(deps.db, now);
  const auditEvents = await purgeAuditEvents(deps.db, new Date(now.getTime() - deps.config.auditRetentionDays * DAY_MS));
  const previousKeys = await dropExpiredPreviousKeys(deps.db, now);
  const inboxBefore = new Date(now.getTime() - deps.config.inboxRetentionDays * DAY_MS);
  const purgeStep = () => deleteDeliveries(deps.db, { states: ['processed', 'ignored'], before: inboxBefore }, INBOX_PURGE_BATCH);
  const deliveries = await inBatches(purgeStep, INBOX_PURGE_BATCH);
  const events = await purgeDeliveredEvents(deps.db, inboxBefore);
  const mfaChallenges = await purgeExpiredMfaState(deps.db, deps.clock);
  const linkTickets = await purgeExpiredLinkTickets(deps.db, deps.clock);
  return { rateLimits, auditEvents, previousKeys, deliveries, events, mfaChallenges, linkTickets };
}
