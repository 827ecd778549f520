import type { Queryable } from '../../lib/db.ts';
import type { SessionRecord } from './sessions.model.ts';

// Every statement on sessions (sessions.model.ts). The statements on the request path keep a
// name, so each connection prepares them once.

const LIVE_SESSION = {
  name: 'auth_by_session',
  text: `SELECT expires_at, coalesce(last_used_at, created_at) AS last_used_at, via, second_step
         FROM sessions WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL AND expires_at > $3`,
};

export type LiveSession = Pick<SessionRecord, 'expires_at' | 'via' | 'second_step'> & { last_used_at: Date };

/** A live session of `accountId`: when it ends, its last use and how it began. */
export async function liveSession(db: Queryable, sessionId: string, accountId: number, now: Date): Promise<LiveSession | undefined> {
  const [row] = await db.query<LiveSession>(LIVE_SESSION, [sessionId, accountId, now]);
  return row;
}

type NewSession = Pick<SessionRecord, 'id' | 'account_id' | 'created_at' | 'expires_at' | 'ip' | 'user_agent' | 'via' | 'second_step'>;

const INSERT_SESSION = {
  name: 'auth_create_session',
  text: `INSERT INTO sessions (id, account_id, created_at, expires_at, last_used_at, ip, user_agent, via, auth_time, second_step)
         VALUES ($1, $2, $3, $4, $3, $5, $6, $7, $3, $8)`,
};

/** A new session, used at its creation, and its person's proof of who they are made then (auth_time). */
export async function insertSession(tx: Queryable, session: NewSession): Promise<void> {
  await tx.query(INSERT_SESSION, [session.id, session.account_id, session.created_at, session.expires_at, session.ip, session.user_agent, session.via, session.second_step]);
}

/** How a session not revoked began, and when its person last proved who they are. */
export async function signInOfSession(db: Queryable, sessionId: string): Promise<Pick<SessionRecord, 'via' | 'auth_time'> | undefined> {
  const [row] = await db.query<Pick<SessionRecord, 'via' | 'auth_time'>>('SELECT via, auth_time FROM sessions WHERE id = $1 AND revoked_at IS NULL', [sessionId]);
  return row;
}

export type ListedSession = Pick<SessionRecord, 'id' | 'created_at' | 'last_used_at' | 'ip' | 'user_agent' | 'via'>;

/** The account's sessions neither revoked nor expired at `now`, newest first. */
export function liveSessions(db: Queryable, accountId: number, now: Date): Promise<ListedSession[]> {
  return db.query<ListedSession>(
    `SELECT id, created_at, last_used_at, ip, user_agent, via FROM sessions
     WHERE account_id = $1 AND revoked_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, id`,
    [accountId, now],
  );
}

/** Ends the account's live sessions, but for `except`; returns how many. */
export async function revokeLiveSessions(db: Queryable, accountId: number, now: Date, except?: string): Promise<number> {
  const rows = await db.query(
    `UPDATE sessions SET revoked_at = $2 WHERE account_id = $1 AND revoked_at IS NULL AND expires_at > $2 AND ($3::uuid IS NULL OR id <> $3) RETURNING id`,
    [accountId, now, except ?? null],
  );
  return rows.length;
}

/** Ends one live session of the account; false when it has no such session. */
export async function revokeLiveSession(tx: Queryable, sessionId: string, accountId: number, now: Date): Promise<boolean> {
  const rows = await tx.query('UPDATE sessions SET revoked_at = $3 WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL AND expires_at > $3 RETURNING id', [
    sessionId,
    accountId,
    now,
  ]);
  return rows.length > 0;
}

/** Ends a session whatever its state (a logout). */
export async function revokeSessionRow(tx: Queryable, sessionId: string, now: Date): Promise<void> {
  await tx.query('UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [sessionId, now]);
}

const TOUCH_SQL = {
  name: 'sessions_touch',
  // The condition on $3, the time of the write, makes "once a minute" hold across instances
  // too; the one on t.at keeps a later use another instance wrote.
  text: `UPDATE sessions s SET last_used_at = t.at
         FROM unnest($1::uuid[], $2::timestamptz[]) AS t(id, at)
         WHERE s.id = t.id AND (s.last_used_at IS NULL OR (s.last_used_at < t.at AND s.last_used_at <= $3::timestamptz - interval '1 minute'))
         RETURNING s.id`,
};

/** Writes the sessions' last uses, one statement for all; returns the ids written. */
export async function writeLastUses(db: Queryable, ids: string[], uses: Date[], now: Date): Promise<string[]> {
  const rows = await db.query<{ id: string }>(TOUCH_SQL, [ids, uses, now]);
  return rows.map((row) => row.id);
}
