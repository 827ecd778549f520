import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { refuseIfLimited } from '../../errors/rate-limited.ts';
import { randomToken, sha256 } from '../../lib/crypto.ts';
import type { Queryable } from '../../lib/db.ts';
import { rateLimitSubject } from '../../lib/rate-limiter.ts';
import { recordEvent } from '../activity/index.ts';
import { perAccountClient, SESSION_RATE_RULES, type AuthContext } from '../sessions/index.ts';
import { invalidProof, verifyProof, type Method, type Proof, type ProofAccount } from './mfa.proofs.ts';
import type { PendingLink } from './mfa.model.ts';
import * as repo from './mfa.repo.ts';

/** A session that proved its second factor needs no new proof for this long. */
export const STEP_UP_MS = 5 * 60_000;
/** The second step of a sign-in must come within this long of the password. */
export const MFA_TOKEN_TTL_MS = 5 * 60_000;
/** Wrong codes a sign-in's token survives; the next sign-in starts with the password again. */
export const MFA_TOKEN_MAX_FAILURES = 5;

/** Whether these are a second factor: an enabled authenticator or a passkey (recovery codes only go with one). */
export const isSecondFactor = (factors: { totp: boolean; passkeys: number }): boolean => factors.totp || factors.passkeys > 0;

/** Whether the account has a second factor. */
export async function hasSecondFactor(db: Queryable, accountId: number): Promise<boolean> {
  return isSecondFactor(await repo.factorsOf(db, accountId));
}

/** The ways an account can prove its second factor, or none when it has no factor. */
export async function methodsOf(db: Queryable, accountId: number): Promise<Method[]> {
  const factors = await repo.factorsOf(db, accountId);
  if (!isSecondFactor(factors)) return [];
  const methods: Method[] = [];
  if (factors.totp) methods.push('totp');
  if (factors.passkeys > 0) methods.push('passkey');
  if (factors.recoveryCodes > 0) methods.push('recovery_code');
  return methods;
}

/**
 * A proof by a signed-in caller, counted before it is checked as a password is (per client,
 * per account and client, and against the account's failed-login cap), so a stolen session
 * or key cannot guess codes past those limits; a right one is given back to the account's
 * counts, as a sign-in that worked is.
 */
export async function checkProof(deps: Deps, account: ProofAccount, proof: Proof, request: RequestInfo): Promise<Method> {
  const perClient = perAccountClient(account.email, request.ip);
  const failed = { rule: SESSION_RATE_RULES.failedLoginsPerAccount, key: account.email };
  refuseIfLimited(await deps.rateLimiter.hit([{ rule: SESSION_RATE_RULES.loginPerIp, key: rateLimitSubject(request.ip) }, perClient]));
  refuseIfLimited(await deps.rateLimiter.hit([failed]));
  const method = await verifyProof(deps, account, proof, request);
  if (!method) {
    await recordEvent(deps.db, deps.clock, 'login.mfa_failed', { accountId: account.id }, request);
    throw invalidProof(proof);
  }
  await deps.rateLimiter.refund(failed);
  await deps.rateLimiter.refund(perClient);
  return method;
}

export const givesProof = (proof: Proof) => proof.code !== undefined || proof.response !== undefined;

/** What a body without a proof of the second factor is told: the ways it could give one. */
export const stepUpRequired = (methods: Method[]) => new AppError('STEP_UP_REQUIRED', undefined, { details: { methods } });

/**
 * Before a sensitive change (password, e-mail, key, deletion, factors, identity providers):
 * an account with a second factor must prove it in the same body. A session that did so in
 * the last five minutes needs no new proof. An API key has no session to step up, so it
 * gives the proof every time: otherwise a key read from /me would be the way around the
 * factor. An account without a factor has none to give.
 */
export async function requireStepUp(deps: Deps, auth: AuthContext, proof: Proof, request: RequestInfo): Promise<void> {
  const methods = await methodsOf(deps.db, auth.account.id);
  if (!methods.length) return;
  const now = deps.clock.now();
  if (auth.sessionId) {
    const until = await repo.steppedUpUntil(deps.db, auth.sessionId);
    if (until && until > now) return;
  }
  if (!givesProof(proof)) throw stepUpRequired(methods);
  await checkProof(deps, auth.account, proof, request);
  if (auth.sessionId) await repo.stepUp(deps.db, auth.sessionId, new Date(now.getTime() + STEP_UP_MS));
}

/** Where a caller stands: whether its account has a second factor to prove, the ways, and until when its session proved it. */
export async function stepUpState(deps: Deps, auth: AuthContext) {
  const methods = await methodsOf(deps.db, auth.account.id);
  const until = methods.length && auth.sessionId ? await repo.steppedUpUntil(deps.db, auth.sessionId) : undefined;
  const live = until && until > deps.clock.now() ? until : undefined;
  return { success: true as const, required: methods.length > 0, methods, stepped_up_until: live?.toISOString() ?? null };
}

/**
 * POST /step-up: a session proves its second factor ahead of the changes it is about to make
 * (the console asks for the code once, then acts), and is stepped up for five minutes as
 * if a change had carried the proof. An API key has no session to step up.
 */
export async function stepUpSession(deps: Deps, auth: AuthContext, proof: Proof, request: RequestInfo) {
  if (!auth.sessionId) throw new AppError('FORBIDDEN', 'An API key has no session to step up: it gives the proof with each change.');
  if (!(await methodsOf(deps.db, auth.account.id)).length) throw new AppError('CONFLICT', 'The account has no second factor to prove.');
  await checkProof(deps, auth.account, proof, request);
  await repo.stepUp(deps.db, auth.sessionId, new Date(deps.clock.now().getTime() + STEP_UP_MS));
  return stepUpState(deps, auth);
}

/**
 * How a sign-in's first step was made, for the second step it waits for: `via` (`password`
 * or a provider's name) for the session; `pendingLink`, the provider's person to link once
 * the second step passes (identities.accounts.ts); `attemptKey`, the key its attempt was
 * counted under in the per-account-and-client login limit, given back once the second step
 * signs in (sessions.login.ts).
 */
export type FirstStep = { via: string; pendingLink?: PendingLink; attemptKey?: string };

/**
 * A sign-in of an account with a second factor stops here after its first step: a
 * single-use token for the second step (only its hash is kept), and the ways it can be
 * given. Undefined when the account has no factor and the sign-in goes on.
 */
export async function startSecondStep(deps: Deps, accountId: number, request: RequestInfo, first: FirstStep): Promise<{ mfa_token: string; methods: Method[] } | undefined> {
  const methods = await methodsOf(deps.db, accountId);
  if (!methods.length) return undefined;
  const token = randomToken(32);
  // The token and its line in the activity log commit together.
  await deps.db.transaction(async (tx) => {
    await repo.insertChallenge(tx, deps.clock, 'mfa_token', sha256(token), accountId, MFA_TOKEN_TTL_MS, first.via, first.pendingLink, first.attemptKey);
    await recordEvent(tx, deps.clock, 'login.mfa_required', { accountId }, request);
  });
  return { mfa_token: token, methods };
}

const METHOD_WORDS: Record<Method, string> = { totp: 'the code from your authenticator app', passkey: 'a passkey', recovery_code: 'a recovery code' };

/** A password sign-in's refusal while its second step waits: 403 MFA_REQUIRED naming the ways this account has. */
export function secondStepRequired(step: { mfa_token: string; methods: Method[] }): AppError {
  const ways = step.methods.map((method) => METHOD_WORDS[method]);
  const said = ways.length > 1 ? `${ways.slice(0, -1).join(', ')} or ${ways[ways.length - 1]}` : ways[0];
  return new AppError('MFA_REQUIRED', `The password is right; now give ${said}.`, { details: step });
}

/** What an unknown, used, expired or exhausted `mfa_token` is told (400 INVALID_TOKEN). */
export const SIGN_IN_GONE = 'The sign-in has expired or was already finished: sign in again.';

/** A sign-in waiting for its second step: its `mfa_token`'s row, the account, and how its first step was made. */
export type PendingSignIn = { id: string; accountId: number } & FirstStep;

/**
 * The sign-in a live `mfa_token` is for; 400 INVALID_TOKEN for an unknown, used, expired or
 * exhausted one.
 */
export async function secondStepAccount(deps: Deps, mfaToken: string): Promise<PendingSignIn> {
  const pending = await repo.liveChallenge(deps.db, deps.clock, 'mfa_token', sha256(mfaToken), { maxFailures: MFA_TOKEN_MAX_FAILURES });
  if (!pending?.account_id) throw new AppError('INVALID_TOKEN', SIGN_IN_GONE);
  return {
    id: pending.id,
    accountId: pending.account_id,
    via: pending.via ?? 'password',
    pendingLink: pending.pending_link ?? undefined,
    attemptKey: pending.attempt_key ?? undefined,
  };
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
