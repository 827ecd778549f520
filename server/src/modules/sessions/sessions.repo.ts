import type { Queryable, SqlPart } from '../../lib/db.ts';
import { ACCOUNT_COLUMNS, passwordStillSql, type AccountRow } from '../accounts/index.ts';
import type { SessionRecord } from './sessions.model.ts';
import type { SecondStep } from './sessions.types.ts';

// Every statement on sessions (sessions.model.ts). The statements on the request path keep a
// name, so each connection prepares them once.

/**
 * The one statement here that reads another module's table, on purpose: a session is
 * authenticated by a join, sessions with accounts, on every request the /me cache misses.
 * Two statements (the session, then accounts.accountById) would cost a second round trip
 * on the hottest path; the join is the sessions module's question, so it stands here, and
 * the accounts module's face gives its columns (ACCOUNT_COLUMNS), so the row it returns is
 * the AccountRow that module declares. tests/architecture.unit.test.ts lists this exception.
 */
const BY_SESSION = {
  name: 'auth_by_session',
  text: `SELECT ${ACCOUNT_COLUMNS}, s.expires_at AS session_expires_at, coalesce(s.last_used_at, s.created_at) AS session_last_used_at,
                s.via AS session_via, s.second_step AS session_second_step
         FROM sessions s JOIN accounts a ON a.id = s.account_id
         WHERE s.id = $1 AND s.account_id = $2 AND s.revoked_at IS NULL AND s.expires_at > $3`,
};

export type SessionAccount = AccountRow & { session_expires_at: Date; session_last_used_at: Date; session_via: string; session_second_step: SecondStep | null };

/** The account of a live session of `accountId`, with the session's end, last use and how it began. */
export async function accountOfLiveSession(db: Queryable, sessionId: string, accountId: number, now: Date): Promise<SessionAccount | undefined> {
  const [row] = await db.query<SessionAccount>(BY_SESSION, [sessionId, accountId, now]);
  return row;
}

type NewSession = Pick<SessionRecord, 'id' | 'account_id' | 'created_at' | 'expires_at' | 'ip' | 'user_agent' | 'via' | 'second_step'>;

/**
 * A new session, used at its creation, and its person's proof of who they are made then
 * (auth_time), written in one statement with its sign-in's line in the activity log (the
 * activity module's insert, given where its values start and that it goes with the session):
 * both commit or neither, in one round trip where a transaction took four (BEGIN, two
 * inserts, COMMIT).
 *
 * With `checkedPassword`, the hash a password sign-in checked, both are written only while
 * it is still the account's (the accounts module's passwordStillSql, its row locked in the
 * same statement), and false says they were not: a reset or change landed first.
 */
export async function insertSession(
  db: Queryable,
  session: NewSession,
  logLine: (first: number, ifWritten: boolean) => SqlPart,
  checkedPassword?: string,
): Promise<boolean> {
  // $1 to $8 are the session's, then the hash checked, then the line's; the line is written
  // with the session (the CTE `written`).
  const logged = logLine(checkedPassword === undefined ? 9 : 10, true);
  const values = [session.id, session.account_id, session.created_at, session.expires_at, session.ip, session.user_agent, session.via, session.second_step];
  const rows = await db.query(
    checkedPassword === undefined
      ? { name: 'auth_create_session_logged', text: `WITH written AS (${INSERT_SESSION} VALUES (${SESSION_VALUES}) RETURNING 1) ${logged.sql} RETURNING 1` }
      : {
          name: 'auth_create_password_session_logged',
          text: `WITH still AS (${passwordStillSql(2, 9)}), written AS (${INSERT_SESSION} SELECT ${SESSION_VALUES} FROM still RETURNING 1) ${logged.sql} RETURNING 1`,
        },
    checkedPassword === undefined ? [...values, ...logged.values] : [...values, checkedPassword, ...logged.values],
  );
  return rows.length > 0;
}

const INSERT_SESSION = 'INSERT INTO sessions (id, account_id, created_at, expires_at, last_used_at, ip, user_agent, via, auth_time, second_step)';
const SESSION_VALUES = '$1, $2, $3, $4, $3, $5, $6, $7, $3, $8';

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
