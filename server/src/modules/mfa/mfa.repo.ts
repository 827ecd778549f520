import type { Clock } from '../../lib/clock.ts';
import type { Queryable } from '../../lib/db.ts';
import type { ChallengeKind, ChallengeRecord, PasskeyRecord, PendingLink, TotpRecord } from './mfa.model.ts';
import { sealedColumn } from '../../lib/sealed-column.ts';

// Every statement on the second factor's tables (migration 0009): mfa_totp,
// mfa_recovery_codes, passkeys, mfa_challenges and mfa_step_ups, declared in mfa.model.ts.
// Those a sign-in runs keep a name, so each connection prepares them once.

export type TotpRow = Pick<TotpRecord, 'secret_sealed' | 'enabled_at' | 'last_step'>;

export type PasskeyRow = PasskeyRecord;

export type { ChallengeKind };

export type ChallengeRow = Pick<ChallengeRecord, 'id' | 'account_id' | 'failures' | 'via' | 'pending_link' | 'attempt_key'>;

/** Which factors an account has: an enabled authenticator, how many passkeys, how many unused recovery codes. */
export async function factorsOf(db: Queryable, accountId: number): Promise<{ totp: boolean; passkeys: number; recoveryCodes: number }> {
  const [row] = await db.query<{ totp: boolean; passkeys: number; codes: number }>(
    {
      name: 'mfa_factors_of',
      text: `SELECT EXISTS (SELECT 1 FROM mfa_totp WHERE account_id = $1 AND enabled_at IS NOT NULL) AS totp,
                    (SELECT count(*)::int FROM passkeys WHERE account_id = $1) AS passkeys,
                    (SELECT count(*)::int FROM mfa_recovery_codes WHERE account_id = $1 AND used_at IS NULL) AS codes`,
    },
    [accountId],
  );
  return { totp: row.totp, passkeys: row.passkeys, recoveryCodes: row.codes };
}

/**
 * Accounts with a second factor (an enabled authenticator or a passkey), counted once each:
 * those with an authenticator, and those with passkeys but none, which spares the union of
 * every id (a tenth of its time at 5,000 authenticators).
 */
export async function countAccountsWithSecondFactor(db: Queryable): Promise<number> {
  const [row] = await db.query<{ count: number }>(
    `SELECT ((SELECT count(*) FROM mfa_totp WHERE enabled_at IS NOT NULL)
           + (SELECT count(DISTINCT p.account_id) FROM passkeys p
              WHERE NOT EXISTS (SELECT 1 FROM mfa_totp t WHERE t.account_id = p.account_id AND t.enabled_at IS NOT NULL)))::int AS count`,
  );
  return row.count;
}

/** Which of these accounts have a second factor: one statement for a page of them. */
export async function accountsWithSecondFactor(db: Queryable, accountIds: number[]): Promise<Set<number>> {
  if (!accountIds.length) return new Set();
  const rows = await db.query<{ account_id: number }>(
    `SELECT account_id FROM mfa_totp WHERE account_id = ANY($1::int[]) AND enabled_at IS NOT NULL
     UNION SELECT account_id FROM passkeys WHERE account_id = ANY($1::int[])`,
    [accountIds],
  );
  return new Set(rows.map((row) => row.account_id));
}

// --- authenticator (TOTP) ---

export async function totpOf(db: Queryable, accountId: number, options: { lock?: boolean } = {}): Promise<TotpRow | undefined> {
  const [row] = await db.query<TotpRow>(
    `SELECT secret_sealed, enabled_at, last_step FROM mfa_totp WHERE account_id = $1${options.lock ? ' FOR UPDATE' : ''}`,
    [accountId],
  );
  return row;
}

/** A new secret waiting for its first code; replaces one that was waiting. Never replaces an enabled one. */
export async function savePendingTotp(db: Queryable, clock: Clock, accountId: number, secretSealed: string): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO mfa_totp (account_id, secret_sealed, created_at) VALUES ($1, $2, $3)
     ON CONFLICT (account_id) DO UPDATE SET secret_sealed = EXCLUDED.secret_sealed, created_at = EXCLUDED.created_at, last_step = NULL
     WHERE mfa_totp.enabled_at IS NULL
     RETURNING 1`,
    [accountId, secretSealed, clock.now()],
  );
  return rows.length > 0;
}

/**
 * Records that a code of `step` was accepted, only if no code of this or a later step was:
 * the statement itself is the replay check, so two uses of one code at once accept one.
 * `enable` turns a waiting authenticator on with it.
 */
export async function acceptTotpStep(db: Queryable, clock: Clock, accountId: number, step: number, options: { enable?: boolean } = {}): Promise<boolean> {
  const rows = await db.query(
    `UPDATE mfa_totp SET last_step = $2, enabled_at = CASE WHEN $3::boolean THEN $4 ELSE enabled_at END
     WHERE account_id = $1 AND (last_step IS NULL OR last_step < $2) AND (enabled_at IS NULL) = $3::boolean
     RETURNING 1`,
    [accountId, step, options.enable ?? false, clock.now()],
  );
  return rows.length > 0;
}

export async function deleteTotp(db: Queryable, accountId: number): Promise<boolean> {
  const rows = await db.query('DELETE FROM mfa_totp WHERE account_id = $1 RETURNING enabled_at', [accountId]);
  return rows.length > 0;
}

// --- recovery codes ---

/** The account's codes become these: every older one, used or not, is gone. */
export async function replaceRecoveryCodes(db: Queryable, clock: Clock, accountId: number, hashes: Buffer[]): Promise<void> {
  await db.query('DELETE FROM mfa_recovery_codes WHERE account_id = $1', [accountId]);
  await db.query(
    `INSERT INTO mfa_recovery_codes (account_id, code_hash, created_at) SELECT $1, hash, $3 FROM unnest($2::bytea[]) AS hash`,
    [accountId, hashes, clock.now()],
  );
}

/** Uses an unused code once: a second use, a concurrent one included, finds nothing. */
export async function useRecoveryCode(db: Queryable, clock: Clock, accountId: number, hashes: Buffer[]): Promise<boolean> {
  const rows = await db.query(
    `UPDATE mfa_recovery_codes SET used_at = $3
     WHERE id = (SELECT id FROM mfa_recovery_codes WHERE account_id = $1 AND code_hash = ANY($2::bytea[]) AND used_at IS NULL LIMIT 1 FOR UPDATE)
     RETURNING 1`,
    [accountId, hashes, clock.now()],
  );
  return rows.length > 0;
}

export async function deleteRecoveryCodes(db: Queryable, accountId: number): Promise<void> {
  await db.query('DELETE FROM mfa_recovery_codes WHERE account_id = $1', [accountId]);
}

// --- passkeys ---

const PASSKEY_COLUMNS = 'id, account_id, credential_id, public_key, counter, transports, user_handle, name, created_at, last_used_at';

export async function passkeysOf(db: Queryable, accountId: number): Promise<PasskeyRow[]> {
  return db.query<PasskeyRow>({ name: 'mfa_passkeys_of', text: `SELECT ${PASSKEY_COLUMNS} FROM passkeys WHERE account_id = $1 ORDER BY created_at, id` }, [accountId]);
}

export async function passkeyByCredential(db: Queryable, credentialId: string): Promise<PasskeyRow | undefined> {
  const [row] = await db.query<PasskeyRow>({ name: 'mfa_passkey_by_credential', text: `SELECT ${PASSKEY_COLUMNS} FROM passkeys WHERE credential_id = $1` }, [credentialId]);
  return row;
}

export async function insertPasskey(db: Queryable, row: Omit<PasskeyRow, 'last_used_at'>): Promise<void> {
  await db.query(
    `INSERT INTO passkeys (id, account_id, credential_id, public_key, counter, transports, user_handle, name, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [row.id, row.account_id, row.credential_id, row.public_key, row.counter, row.transports, row.user_handle, row.name, row.created_at],
  );
}

export async function deletePasskey(db: Queryable, accountId: number, id: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM passkeys WHERE id = $1 AND account_id = $2 RETURNING 1', [id, accountId]);
  return rows.length > 0;
}

// --- challenges: mfa tokens and WebAuthn challenges ---

const INSERT_CHALLENGE_SQL = 'INSERT INTO mfa_challenges (kind, token_hash, account_id, created_at, expires_at, via, pending_link, attempt_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)';

function challengeValues(clock: Clock, kind: ChallengeKind, hash: Buffer, accountId: number | null, ttlMs: number, via: string | undefined, pendingLink?: PendingLink, attemptKey?: string): unknown[] {
  const now = clock.now();
  return [kind, hash, accountId, now, new Date(now.getTime() + ttlMs), via ?? null, pendingLink ? JSON.stringify(pendingLink) : null, attemptKey ?? null];
}

export async function insertChallenge(db: Queryable, clock: Clock, kind: ChallengeKind, hash: Buffer, accountId: number | null, ttlMs: number, via?: string, pendingLink?: PendingLink, attemptKey?: string): Promise<void> {
  await db.query({ name: 'mfa_insert_challenge', text: INSERT_CHALLENGE_SQL }, challengeValues(clock, kind, hash, accountId, ttlMs, via, pendingLink, attemptKey));
}

const LIVE_CHALLENGE_SQL = `SELECT id, account_id, failures, via, pending_link, attempt_key FROM mfa_challenges
  WHERE token_hash = $1 AND kind = $2 AND used_at IS NULL AND expires_at > $3 AND failures < $4`;
const LIVE_CHALLENGE = { name: 'mfa_live_challenge', text: LIVE_CHALLENGE_SQL };
const LIVE_CHALLENGE_LOCKED = { name: 'mfa_live_challenge_locked', text: `${LIVE_CHALLENGE_SQL} FOR UPDATE` };

/** A live challenge of this kind, not used, not expired, under `maxFailures` failures; locked when `lock`. */
export async function liveChallenge(db: Queryable, clock: Clock, kind: ChallengeKind, hash: Buffer, options: { maxFailures?: number; lock?: boolean } = {}): Promise<ChallengeRow | undefined> {
  const [row] = await db.query<ChallengeRow>(options.lock ? LIVE_CHALLENGE_LOCKED : LIVE_CHALLENGE, [hash, kind, clock.now(), options.maxFailures ?? 1]);
  return row;
}

const USE_CHALLENGE_SQL = 'UPDATE mfa_challenges SET used_at = $2 WHERE id = $1 AND used_at IS NULL AND expires_at > $2 AND failures < $3 RETURNING 1';
/** Unless a caller allows more: a challenge with one wrong answer against it is spent. */
const DEFAULT_MAX_FAILURES = 1;
const USE_CHALLENGE = { name: 'mfa_use_challenge', text: USE_CHALLENGE_SQL };

/**
 * Uses a challenge once, while it is live as liveChallenge reads it (not expired, fewer
 * than `maxFailures` failures): a second use, a concurrent one included, finds nothing.
 */
export async function useChallenge(db: Queryable, clock: Clock, id: string, options: { maxFailures?: number } = {}): Promise<boolean> {
  const rows = await db.query(USE_CHALLENGE, [id, clock.now(), options.maxFailures ?? DEFAULT_MAX_FAILURES]);
  return rows.length > 0;
}

/**
 * A passkey sign-in's challenge used once (as useChallenge) and the passkey's new counter
 * recorded, only when the challenge was used and the stored counter is still what the check
 * saw (two assertions racing with one counter value cannot both count), in one statement
 * where a transaction took four round trips. True when both held. The challenge stays used
 * when the counter moved meanwhile, as it did in that transaction.
 */
export async function useChallengeWithPasskey(db: Queryable, clock: Clock, challengeId: string, passkey: { id: string; seenCounter: string; newCounter: number }): Promise<boolean> {
  const rows = await db.query(
    {
      name: 'mfa_use_challenge_with_passkey',
      text: `WITH used AS (${USE_CHALLENGE_SQL})
             UPDATE passkeys SET counter = $6, last_used_at = $2 WHERE id = $4 AND counter = $5 AND EXISTS (SELECT 1 FROM used) RETURNING 1`,
    },
    [challengeId, clock.now(), DEFAULT_MAX_FAILURES, passkey.id, passkey.seenCounter, passkey.newCounter],
  );
  return rows.length > 0;
}

/** One more wrong answer to a challenge; returns how many it now has. */
export async function failChallenge(db: Queryable, id: string): Promise<number> {
  const [row] = await db.query<{ failures: number }>('UPDATE mfa_challenges SET failures = failures + 1 WHERE id = $1 RETURNING failures', [id]);
  return row?.failures ?? 0;
}

/** Challenges past their expiry, in small batches (the worker's housekeeping). */
export async function purgeExpiredChallenges(db: Queryable, clock: Clock, limit: number): Promise<number> {
  const rows = await db.query(
    'DELETE FROM mfa_challenges WHERE id IN (SELECT id FROM mfa_challenges WHERE expires_at < $1 LIMIT $2) RETURNING 1',
    [clock.now(), limit],
  );
  return rows.length;
}

export async function purgeExpiredStepUps(db: Queryable, clock: Clock): Promise<number> {
  return (await db.query('DELETE FROM mfa_step_ups WHERE until < $1 RETURNING 1', [clock.now()])).length;
}

export async function deleteChallengesOf(db: Queryable, accountId: number): Promise<void> {
  await db.query('DELETE FROM mfa_challenges WHERE account_id = $1', [accountId]);
}

// --- step-up ---

export async function steppedUpUntil(db: Queryable, sessionId: string): Promise<Date | undefined> {
  const [row] = await db.query<{ until: Date }>('SELECT until FROM mfa_step_ups WHERE session_id = $1', [sessionId]);
  return row?.until;
}

export async function stepUp(db: Queryable, sessionId: string, until: Date): Promise<void> {
  await db.query(
    'INSERT INTO mfa_step_ups (session_id, until) VALUES ($1, $2) ON CONFLICT (session_id) DO UPDATE SET until = EXCLUDED.until',
    [sessionId, until],
  );
}

/** A session's step-up ends before its five minutes: its password changed. */
export async function endStepUp(db: Queryable, sessionId: string): Promise<void> {
  await db.query('DELETE FROM mfa_step_ups WHERE session_id = $1', [sessionId]);
}

/** Authenticator secrets, sealed at `mfa_totp.secret_sealed` for their account (mfa.proofs.ts totpPlace). */
export const sealedTotpSecrets = sealedColumn('mfa_totp.secret_sealed', {
  sample: 'SELECT account_id AS key, secret_sealed AS value FROM mfa_totp LIMIT 1',
  countNotLike: 'SELECT count(*) AS count FROM mfa_totp WHERE secret_sealed NOT LIKE $1',
  pageNotLike: 'SELECT account_id AS key, secret_sealed AS value FROM mfa_totp WHERE secret_sealed NOT LIKE $1 AND ($2::integer IS NULL OR account_id > $2) ORDER BY account_id LIMIT $3',
  reseal: 'UPDATE mfa_totp SET secret_sealed = $2 WHERE account_id = $1 AND secret_sealed = $3',
});
