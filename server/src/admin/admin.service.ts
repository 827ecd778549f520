import type { Deps } from '../deps.ts';
import { AppError } from '../errors/errors.ts';
import { webhookReplayJobs } from '../jobs.ts';
import { inBatches } from '../lib/batches.ts';
import { inTransaction } from '../lib/queue.ts';
import { isUuid } from '../lib/text.ts';
import { accountRowByEmail, toAccountSummary } from '../modules/accounts/index.ts';
import { recordAction, recordEvent } from '../modules/activity/index.ts';
import { emitSecurityChange } from '../modules/events/index.ts';
import { forgetCachedAccount, sessionsRevokedByAdminNotice, signOutEverywhere } from '../modules/sessions/index.ts';
import { factorNotice, hasSecondFactor, removeAllFactors } from '../modules/mfa/index.ts';
import { reencryptSecrets as reencrypt, type ReencryptProgress, type ReencryptReport } from '../secrets/reencrypt.ts';
import * as inbox from '../webhooks/inbox/repo.ts';
import { PROVIDER_NAMES } from '../webhooks/provider.ts';
import type { Actor } from '../lib/request.ts';
import { lockAccount, NO_SUCH_ADDRESS, type AccountTarget } from './admin.accounts.service.ts';
import { secondsSince } from './admin.seconds.ts';
import type { ListInboxInput, ReplayDeliveriesInput } from './admin.schemas.ts';

export type { Actor } from '../lib/request.ts';

const REPLAY_BATCH = 500;
const PURGE_BATCH = 1000;
const DEFAULT_PAGE = 50;

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** Every provider, with zeros where it has no deliveries, and the age of its oldest waiting one. */
export async function inboxStats(deps: Deps, actor: Actor) {
  const providers = await inboxProviderStats(deps);
  await recordAction(deps.db, deps.clock, actor, 'admin.inbox_read', { what: 'stats' });
  return { success: true as const, providers };
}

/** The inbox's counts as inboxStats gives them, read without recording: for a caller that records its own read (the overview). */
export async function inboxProviderStats(deps: Deps) {
  const rows = await inbox.countByProviderAndState(deps.db);
  const now = deps.clock.now();
  return PROVIDER_NAMES.map((provider) => {
    const own = rows.filter((row) => row.provider === provider);
    const count = (state: inbox.InboxState) => own.find((row) => row.state === state)?.count ?? 0;
    const oldest = own.find((row) => row.state === 'received')?.oldest_received;
    return {
      provider,
      received: count('received'),
      processed: count('processed'),
      ignored: count('ignored'),
      dead: count('dead'),
      oldest_pending_seconds: secondsSince(now, oldest),
    };
  });
}

const toItem = (row: inbox.InboxRow) => ({
  id: row.id,
  provider: row.provider,
  scope: row.scope,
  external_id: row.external_id,
  state: row.state,
  received_at: row.received_at.toISOString(),
  processed_at: iso(row.processed_at),
  attempts: row.attempts,
  last_error: row.last_error,
  reason: row.reason,
});

/** The cursor is the last row's (received_at, id), opaque to callers. */
const encodeCursor = (row: inbox.InboxRow) => Buffer.from(JSON.stringify([row.received_at.toISOString(), row.id])).toString('base64url');

function decodeCursor(cursor: string): { receivedAt: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const receivedAt = new Date(at);
    if (!Number.isNaN(receivedAt.getTime()) && typeof id === 'string' && isUuid(id)) return { receivedAt, id };
  } catch {
    // not one of ours
  }
  throw new AppError('VALIDATION_FAILED', undefined, { issues: [{ path: 'cursor', message: 'is not a cursor this list gave out' }] });
}

const filterOf = (input: { provider?: inbox.InboxFilter['provider']; since?: string; until?: string }) => ({
  provider: input.provider,
  since: input.since ? new Date(input.since) : undefined,
  until: input.until ? new Date(input.until) : undefined,
});

/** Newest first, filtered, a page at a time; `next_cursor` is null on the last page. */
export async function listInbox(deps: Deps, actor: Actor, input: ListInboxInput) {
  const limit = input.limit ?? DEFAULT_PAGE;
  const after = input.cursor ? decodeCursor(input.cursor) : undefined;
  const rows = await inbox.listDeliveries(deps.db, { ...filterOf(input), state: input.state }, after, limit + 1);
  const page = rows.slice(0, limit);
  await recordAction(deps.db, deps.clock, actor, 'admin.inbox_read', { what: 'list', filter: { ...input, cursor: undefined } });
  return { success: true as const, items: page.map(toItem), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null };
}

async function deliveryOrNotFound(deps: Deps, id: string) {
  const row = isUuid(id) ? await inbox.findDelivery(deps.db, id) : undefined;
  if (!row) throw new AppError('NOT_FOUND', 'No such delivery.');
  return row;
}

/** One delivery with its payload, as received (text); reading a payload is itself logged. */
export async function showDelivery(deps: Deps, actor: Actor, id: string) {
  const row = await deliveryOrNotFound(deps, id);
  await recordAction(deps.db, deps.clock, actor, 'admin.delivery_read', { delivery: row.id });
  return { success: true as const, delivery: { ...toItem(row), payload: row.payload.toString('utf8') } };
}

/**
 * Applies a delivery again through its handler, by the same exactly-once path as a first
 * delivery: back to 'received' and a fresh job, in one transaction. A delivery still waiting
 * is left to the job it has; two replays at once apply it once (repo.ts reopenDelivery).
 */
export async function replayDelivery(deps: Deps, actor: Actor, id: string) {
  const row = await deliveryOrNotFound(deps, id);
  await deps.db.transaction(async (tx) => {
    if (!(await inbox.reopenDelivery(tx, row.id, deps.clock.now()))) return;
    await deps.queue.insert(webhookReplayJobs([row.id]), inTransaction(tx));
    await recordAction(tx, deps.clock, actor, 'admin.delivery_replayed', { delivery: row.id, was: row.state });
  });
  return { success: true as const };
}

/** Every dead (or ignored) delivery matching the filter, in batches of their own transactions. */
export async function replayDeliveries(deps: Deps, actor: Actor, input: ReplayDeliveriesInput, onProgress?: (replayed: number) => void) {
  const filter = { ...filterOf(input), state: input.state ?? ('dead' as const) };
  // Each batch starts after the last one: a delivery settled as ignored again meanwhile is
  // not replayed twice.
  let after: inbox.ReplayPosition | undefined;
  const step = () =>
    deps.db.transaction(async (tx) => {
      const { ids, last } = await inbox.reopenDeliveries(tx, filter, deps.clock.now(), REPLAY_BATCH, after);
      if (ids.length) await deps.queue.insert(webhookReplayJobs(ids), inTransaction(tx));
      after = last ?? after;
      return ids.length;
    });
  const replayed = await inBatches(step, REPLAY_BATCH, onProgress);
  await recordAction(deps.db, deps.clock, actor, 'admin.deliveries_replayed', { filter: input, replayed });
  return { success: true as const, replayed };
}

/** Deletes deliveries in `states` received before `before`, a thousand per statement. */
export async function purgeDeliveries(
  deps: Deps,
  actor: Actor,
  filter: { states: inbox.InboxState[]; before: Date; provider?: inbox.InboxFilter['provider'] },
  onProgress?: (purged: number) => void,
): Promise<number> {
  const purged = await inBatches(() => inbox.deleteDeliveries(deps.db, filter, PURGE_BATCH), PURGE_BATCH, onProgress);
  await recordAction(deps.db, deps.clock, actor, 'admin.deliveries_purged', { states: filter.states, before: filter.before.toISOString(), provider: filter.provider, purged });
  return purged;
}

/** The account with this e-mail address (normalised), without its API key, and whether it has a second factor. */
export async function findAccount(deps: Deps, actor: Actor, email: string) {
  const account = await accountRowByEmail(deps.db, email);
  // A lookup that finds nothing is an admin's action all the same.
  await recordAction(deps.db, deps.clock, actor, 'admin.account_read', { email, account: account?.id ?? null });
  if (!account) throw new AppError('NOT_FOUND', NO_SUCH_ADDRESS);
  return { success: true as const, account: { ...toAccountSummary(account), mfa: await hasSecondFactor(deps.db, account.id) } };
}

/**
 * The owner's "sign out everywhere", done by an administrator: every live session ends on
 * every instance, and pending e-mail-change and reset links die with them. The owner's log
 * says an administrator did it (without the admin's address), the admin's log names the
 * account, and the owner is mailed.
 */
export async function revokeAccountSessions(deps: Deps, actor: Actor, target: AccountTarget) {
  const { owner, revoked } = await deps.db.transaction(async (tx) => {
    const account = await lockAccount(tx, target);
    const count = await signOutEverywhere(tx, deps.clock, account.id);
    const byAdmin = { ip: '', requestId: actor.request.requestId };
    await recordEvent(tx, deps.clock, 'session.revoked', { accountId: account.id }, byAdmin, { count, by: 'admin' });
    await emitSecurityChange(tx, deps.clock, account.id, 'sessions_revoked');
    await recordAction(tx, deps.clock, actor, 'admin.sessions_revoked', { account: account.id, revoked: count });
    return { owner: account, revoked: count };
  });
  forgetCachedAccount(deps, owner.id);
  deps.mailer.sendInBackground(sessionsRevokedByAdminNotice(owner.email, owner.name, `${deps.config.publicUrl}/login`));
  return { success: true as const, account: { id: owner.id, email: owner.email }, revoked };
}

/**
 * For an owner locked out of their second factor (a lost phone, no recovery codes), once an
 * administrator has made sure who is asking: the authenticator, passkeys, recovery codes and
 * pending challenges go, so the password alone signs in again. Audited on both sides; the
 * owner is mailed, so a reset they did not ask for does not go unseen (an account that had
 * no factor is neither told nor changed).
 */
export async function resetAccountMfa(deps: Deps, actor: Actor, target: AccountTarget) {
  const { owner, removed, hadFactor } = await deps.db.transaction(async (tx) => {
    const account = await lockAccount(tx, target);
    const removed = await removeAllFactors(tx, account.id);
    const hadFactor = removed.totp || removed.passkeys > 0;
    // An account that had no factor changes not at all: only the administrator's try is recorded.
    if (hadFactor) {
      const byAdmin = { ip: '', requestId: actor.request.requestId };
      await recordEvent(tx, deps.clock, 'mfa.disabled', { accountId: account.id }, byAdmin, { by: 'admin', ...removed });
      await emitSecurityChange(tx, deps.clock, account.id, 'mfa');
    }
    await recordAction(tx, deps.clock, actor, 'admin.mfa_reset', { account: account.id, ...removed });
    return { owner: account, removed, hadFactor };
  });
  if (hadFactor) deps.mailer.sendInBackground(factorNotice(owner.email, owner.name, 'reset_by_admin', `${deps.config.publicUrl}/account`));
  return { success: true as const, account: { id: owner.id, email: owner.email }, removed };
}

/**
 * `secrets reencrypt` (docs/DEPLOY.md, Rotating secrets): every stored secret under the first DATA_KEY.
 * Recorded with its counts; the values themselves never leave the database.
 */
export async function reencryptSecrets(deps: Deps, actor: Actor, onProgress?: ReencryptProgress): Promise<ReencryptReport> {
  const report = await reencrypt(deps, onProgress);
  await recordAction(deps.db, deps.clock, actor, 'admin.secrets_reencrypted', { reencrypted: report.reencrypted, unreadable: report.unreadable });
  return report;
}

export { auditExportPage, exportAuditEvents } from './audit-export.service.ts';
export { accountDetails, resendVerificationMail, searchAccounts, setRole, type AccountTarget } from './admin.accounts.service.ts';
