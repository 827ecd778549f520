import type { RequestInfo } from '../../trpc/context.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { refuseIfLimited } from '../../errors/rate-limited.ts';
import { randomToken, sha256 } from '../../lib/crypto.ts';
import { eventInsert, recordEvent } from '../activity/index.ts';
import { SESSION_RATE_RULES, type AuthContext } from '../sessions/index.ts';
import { invalidProof, methodsOf, verifyProof, type Method, type Proof, type ProofAccount } from './mfa.proofs.ts';
import type { PendingLink } from './mfa.model.ts';
import * as repo from './mfa.repo.ts';

/** A session that proved its second factor needs no new proof for this long. */
export const STEP_UP_MS = 5 * 60_000;
/** The second step of a sign-in must come within this long of the password. */
export const MFA_TOKEN_TTL_MS = 5 * 60_000;
/** Wrong codes a sign-in's token survives; the next sign-in starts with the password again. */
export const MFA_TOKEN_MAX_FAILURES = 5;

/**
 * A proof by a signed-in caller, counted as a failed login of the account before it is
 * checked (as a password is), so a stolen session cannot guess codes past the account's cap;
 * a right one is taken back off the count.
 */
export async function checkProof(deps: Deps, account: ProofAccount, proof: Proof, request: RequestInfo): Promise<Method> {
  const attempt = { rule: SESSION_RATE_RULES.failedLoginsPerAccount, key: account.email };
  refuseIfLimited(await deps.rateLimiter.hit([attempt]));
  const method = await verifyProof(deps, account, proof, request);
  if (!method) {
    await recordEvent(deps.db, deps.clock, 'login.mfa_failed', { accountId: account.id }, request);
    throw invalidProof(proof);
  }
  await deps.rateLimiter.refund(attempt);
  return method;
}

export const givesProof = (proof: Proof) => proof.code !== undefined || proof.response !== undefined;

/** What a body without a proof of the second factor is told: the ways it could give one. */
export const stepUpRequired = (methods: Method[]) => new AppError('STEP_UP_REQUIRED', undefined, { details: { methods } });

/**
 * Before a sensitive change by a session (password, e-mail, key, deletion, factors): an
 * account with a second factor must prove it in the same body, unless this session did so
 * in the last five minutes. The API key is a machine credential and needs no proof; an
 * account without a factor has none to give.
 */
export async function requireStepUp(deps: Deps, auth: AuthContext, proof: Proof, request: RequestInfo): Promise<void> {
  if (!auth.sessionId) return;
  const methods = await methodsOf(deps.db, auth.account.id);
  if (!methods.length) return;
  const until = await repo.steppedUpUntil(deps.db, auth.sessionId);
  const now = deps.clock.now();
  if (until && until > now) return;
  if (!givesProof(proof)) throw stepUpRequired(methods);
  await checkProof(deps, auth.account, proof, request);
  await repo.stepUp(deps.db, auth.sessionId, new Date(now.getTime() + STEP_UP_MS));
}

/**
 * A password sign-in of an account with a second factor stops here: a single-use token for
 * the second step (only its hash is kept), and the ways it can be given. Undefined when the
 * account has no factor and the sign-in goes on. `via`: how the first step was made (a
 * provider's name), for the session the second step starts; `pendingLink`: the provider's
 * person to link to the account once the second step passes (identities.accounts.ts).
 */
export async function startSecondStep(deps: Deps, accountId: number, request: RequestInfo, via = 'password', pendingLink?: PendingLink): Promise<{ mfa_token: string; methods: Method[] } | undefined> {
  const methods = await methodsOf(deps.db, accountId);
  if (!methods.length) return undefined;
  const token = randomToken(32);
  await repo.insertChallengeLogged(deps.db, deps.clock, { kind: 'mfa_token', hash: sha256(token), accountId, ttlMs: MFA_TOKEN_TTL_MS, via, pendingLink }, (first) =>
    eventInsert(first, deps.clock, 'login.mfa_required', accountId, request),
  );
  return { mfa_token: token, methods };
}

/** What an unknown, used, expired or exhausted `mfa_token` is told (400 INVALID_TOKEN). */
export const SIGN_IN_GONE = 'The sign-in has expired or was already finished: sign in again.';

/**
 * A sign-in waiting for its second step: its `mfa_token`'s row, the account, how its first
 * step was made, and the provider identity it links once the second step passes, if any.
 */
export type PendingSignIn = { id: string; accountId: number; via: string; pendingLink?: PendingLink };

/**
 * The sign-in a live `mfa_token` is for; 400 INVALID_TOKEN for an unknown, used, expired or
 * exhausted one.
 */
export async function secondStepAccount(deps: Deps, mfaToken: string): Promise<PendingSignIn> {
  const pending = await repo.liveChallenge(deps.db, deps.clock, 'mfa_token', sha256(mfaToken), { maxFailures: MFA_TOKEN_MAX_FAILURES });
  if (!pending?.account_id) throw new AppError('INVALID_TOKEN', SIGN_IN_GONE);
  return { id: pending.id, accountId: pending.account_id, via: pending.via ?? 'password', pendingLink: pending.pending_link ?? undefined };
}

/**
 * The second step of the sign-in secondStepAccount found: a right proof uses the token
 * (once, a concurrent second use included, and only while it has fewer than five failures,
 * however many proofs were checked at once) and the sign-in goes on; a wrong one counts
 * against the token (five void it) and is a 401 like a wrong password. The failed-login
 * limits are the caller's, as for a password.
 */
export async function finishSecondStep(deps: Deps, pending: PendingSignIn, account: ProofAccount, proof: Proof, request: RequestInfo): Promise<Method> {
  if (pending.accountId !== account.id) throw new AppError('INVALID_TOKEN', SIGN_IN_GONE);
  const method = await verifyProof(deps, account, proof, request);
  if (!method) {
    await repo.failChallenge(deps.db, pending.id);
    await recordEvent(deps.db, deps.clock, 'login.mfa_failed', { accountId: account.id }, request);
    throw new AppError('INVALID_CREDENTIALS', 'The code is wrong or was already used.');
  }
  if (!(await repo.useChallenge(deps.db, deps.clock, pending.id, { maxFailures: MFA_TOKEN_MAX_FAILURES }))) throw new AppError('INVALID_TOKEN', SIGN_IN_GONE);
  return method;
}
