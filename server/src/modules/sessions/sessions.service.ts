import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Queryable } from '../../lib/db.ts';
import { isUuid } from '../../lib/text.ts';
import { TAKEOVER_LINKS, voidTokens } from '../accounts/index.ts';
import { recordEvent } from '../activity/index.ts';
import { emitSecurityChange } from '../events/index.ts';
import { sessionIdle } from './sessions.credentials.ts';
import * as repo from './sessions.repo.ts';
import type { AuthContext } from './sessions.types.ts';
import { forgetCachedAccount } from './sessions.cache.ts';
import { sessionTouchesOf } from './sessions.touches.ts';

/**
 * The account's live sessions, newest first; `current` marks the calling JWT's. One idle past
 * SESSION_IDLE_TIMEOUT is over, though its row stays until it expires.
 */
export async function listSessions(deps: Deps, auth: AuthContext) {
  const sessions = await liveSessionsOf(deps, auth.account.id);
  return { success: true as const, sessions: sessions.map((session) => ({ ...session, current: session.id === auth.sessionId })) };
}

/** The account's live sessions, newest first, with their last use as this process knows it: its owner's list, or an administrator's look at it. */
export async function liveSessionsOf(deps: Deps, accountId: number) {
  const rows = await repo.liveSessions(deps.db, accountId, deps.clock.now());
  const live = rows.filter((row) => !sessionIdle(deps, row.id, row.last_used_at ?? row.created_at));
  return live.map((row) => {
    const pending = sessionTouchesOf(deps).pending(row.id);
    const lastUsed = pending && (!row.last_used_at || pending > row.last_used_at) ? pending : row.last_used_at;
    return {
      id: row.id,
      created_at: row.created_at.toISOString(),
      last_used_at: lastUsed?.toISOString() ?? null,
      ip: row.ip,
      user_agent: row.user_agent,
      via: row.via,
    };
  });
}

/**
 * How a live session began (`password`, `passkey` or a provider's name) and when its person
 * last proved who they are: what a change that would ask for a password weighs instead of it.
 */
export async function sessionSignIn(db: Queryable, sessionId: string): Promise<{ via: string; authTime: Date } | undefined> {
  const row = await repo.signInOfSession(db, sessionId);
  return row && { via: row.via, authTime: row.auth_time };
}

/** Ends the account's live sessions, but for `except`; returns how many. */
export async function revokeSessions(db: Queryable, clock: Clock, accountId: number, except?: string): Promise<number> {
  return repo.revokeLiveSessions(db, accountId, clock.now(), except);
}

/** Ends one session of the account at once, on every instance; another account's is a 404. */
export async function revokeSession(deps: Deps, auth: AuthContext, sessionId: string, request: RequestInfo) {
  const revoked = await deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    const revoked = isUuid(sessionId) && (await repo.revokeLiveSession(tx, sessionId, auth.account.id, now));
    if (revoked) {
      await recordEvent(tx, deps.clock, 'session.revoked', { accountId: auth.account.id }, request, { session: sessionId.toLowerCase() });
      await emitSecurityChange(tx, deps.clock, auth.account.id, 'sessions_revoked');
    }
    return revoked;
  });
  if (!revoked) throw new AppError('NOT_FOUND', 'No such session.');
  forgetCachedAccount(deps, auth.account.id);
  return { success: true as const };
}

/**
 * Ends the account's live sessions but `except`, in the caller's transaction. Whoever is
 * being signed out may have asked for an e-mail change or a reset link: those die too.
 * "Sign out everywhere", by the owner or by an administrator (admin.revokeSessions).
 */
export async function signOutEverywhere(tx: Queryable, clock: Clock, accountId: number, except?: string): Promise<number> {
  await voidTokens(tx, clock, accountId, TAKEOVER_LINKS);
  return revokeSessions(tx, clock, accountId, except);
}

/** "Sign out everywhere": every live session, or every other one (the calling JWT's stays). */
export async function revokeAllSessions(deps: Deps, auth: AuthContext, keepCurrent: boolean, request: RequestInfo) {
  const revoked = await deps.db.transaction(async (tx) => {
    const count = await signOutEverywhere(tx, deps.clock, auth.account.id, keepCurrent ? auth.sessionId : undefined);
    if (count) {
      await recordEvent(tx, deps.clock, 'session.revoked', { accountId: auth.account.id }, request, { count, kept_current: keepCurrent });
      await emitSecurityChange(tx, deps.clock, auth.account.id, 'sessions_revoked');
    }
    return count;
  });
  forgetCachedAccount(deps, auth.account.id);
  return { success: true as const, revoked };
}

/** Only a session can be logged out; an API key is permanent. */
export async function logout(deps: Deps, auth: AuthContext, request: RequestInfo): Promise<void> {
  const { sessionId } = auth;
  if (!sessionId) throw new AppError('UNAUTHORIZED', 'Log out with the session token, not the API key.');
  await deps.db.transaction(async (tx) => {
    await repo.revokeSessionRow(tx, sessionId, deps.clock.now());
    await recordEvent(tx, deps.clock, 'logout', { accountId: auth.account.id }, request);
  });
  // The trigger's notice reaches this instance a moment later; the caller may ask again sooner.
  forgetCachedAccount(deps, auth.account.id);
}
