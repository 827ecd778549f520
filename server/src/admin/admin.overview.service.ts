import type { Deps } from '../deps.ts';
import { accountCounts } from '../modules/accounts/index.ts';
import { eventCountsByHour, latestOfTypes, recordAction, type AuditEvent, type LatestEventRow } from '../modules/activity/index.ts';
import { endpointBacklogs } from '../modules/events/index.ts';
import { countAccountsWithSecondFactor } from '../modules/mfa/index.ts';
import type { Actor } from '../lib/request.ts';
import { secondsSince } from './admin.seconds.ts';
import { inboxProviderStats } from './admin.service.ts';

// The console's first page (docs/API.md, Operator API, admin.overview): what an operator looks
// at first, from the owners' faces, in statements that read a bounded part of each table
// (bench/admin-overview.ts measures it at 100,000 accounts and 1,000,000 activity events).

const HOUR_MS = 3_600_000;
const HOURS = 24;
const RECENT_ACTIONS = 10;
const NEW_ACCOUNT_DAYS = 7;

/** Activity events that count as a sign-in, and as a failed one, in the overview's hours. */
export const SIGN_INS = ['login.succeeded', 'login.oauth'] as const satisfies readonly AuditEvent[];
export const FAILED_SIGN_INS = ['login.failed', 'login.mfa_failed', 'login.locked'] as const satisfies readonly AuditEvent[];

/**
 * What admins change, as the activity log names it: the overview's "recent admin actions".
 * Reads (ADMIN_READS) are recorded too, but a page that lists them would mostly show itself
 * being read. Every admin.* event is in one list or the other (tests/admin.console.rest.test.ts).
 */
export const ADMIN_CHANGES = [
  'account.promoted',
  'admin.role_changed',
  'admin.sessions_revoked',
  'admin.mfa_reset',
  'admin.verification_resent',
  'admin.delivery_replayed',
  'admin.deliveries_replayed',
  'admin.deliveries_purged',
  'admin.secrets_reencrypted',
  'admin.event_endpoint_created',
  'admin.event_endpoint_updated',
  'admin.event_endpoint_secret_rotated',
  'admin.event_endpoint_deleted',
  'admin.event_endpoint_tested',
  'admin.event_delivery_retried',
  'admin.event_deliveries_retried',
] as const satisfies readonly AuditEvent[];

export const ADMIN_READS = [
  'admin.overview_read',
  'admin.inbox_read',
  'admin.delivery_read',
  'admin.account_read',
  'admin.accounts_searched',
  'admin.event_endpoints_read',
  'admin.event_deliveries_read',
  'admin.audit_exported',
] as const satisfies readonly AuditEvent[];

/** The start of each of the last 24 UTC hours, oldest first, the one under way last. */
function lastHours(now: Date): Date[] {
  const current = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  return Array.from({ length: HOURS }, (_, index) => new Date(current - (HOURS - 1 - index) * HOUR_MS));
}

async function signInsPerHour(deps: Deps, hours: Date[]) {
  const counts = await eventCountsByHour(deps.db, [...SIGN_INS, ...FAILED_SIGN_INS], hours[0]);
  const buckets = hours.map((hour) => ({ hour: hour.toISOString(), succeeded: 0, failed: 0 }));
  const succeeded = new Set<string>(SIGN_INS);
  for (const { hour, event, count } of counts) {
    const index = Math.round((hour.getTime() - hours[0].getTime()) / HOUR_MS);
    // An event stamped past the current hour (another machine's clock ahead) is left out.
    if (index < 0 || index >= HOURS) continue;
    buckets[index][succeeded.has(event) ? 'succeeded' : 'failed'] += count;
  }
  return buckets;
}

/** The account an action was on: the promoted one, or the `account` an admin's line names. */
function recentAction(row: LatestEventRow) {
  const promoted = row.event === 'account.promoted';
  const target = promoted ? row.account_id : row.data?.account;
  return {
    at: row.at.toISOString(),
    admin_id: promoted ? null : row.account_id,
    type: row.event,
    account_id: typeof target === 'number' ? target : null,
  };
}

async function endpointsWithBacklog(deps: Deps, now: Date) {
  const rows = await endpointBacklogs(deps.db);
  return rows.map((row) => ({ id: row.id, url: row.url, enabled: row.enabled, oldest_pending_seconds: secondsSince(now, row.oldest_pending) }));
}

/**
 * The overview, read in parallel on the pool, its read recorded beside the reads (not after
 * them: a look at the overview is recorded as asked, like a lookup that finds nothing), but
 * not listed among the changes.
 */
export async function overview(deps: Deps, actor: Actor) {
  const now = deps.clock.now();
  const [counts, mfa, logins, inbox, endpoints, recent] = await Promise.all([
    accountCounts(deps.db, new Date(now.getTime() - NEW_ACCOUNT_DAYS * 24 * HOUR_MS)),
    countAccountsWithSecondFactor(deps.db),
    signInsPerHour(deps, lastHours(now)),
    inboxProviderStats(deps),
    endpointsWithBacklog(deps, now),
    latestOfTypes(deps.db, ADMIN_CHANGES, RECENT_ACTIONS),
    recordAction(deps.db, deps.clock, actor, 'admin.overview_read', {}),
  ]);
  return {
    success: true as const,
    accounts: { total: counts.total, verified: counts.verified, mfa, new_7d: counts.created_since },
    logins,
    inbox,
    endpoints,
    recent_actions: recent.map(recentAction),
  };
}
