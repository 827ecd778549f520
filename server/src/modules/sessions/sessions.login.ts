import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Credentials, RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { refuseIfLimited } from '../../errors/rate-limited.ts';
import { rateLimitSubject, type RateCheck, type RateDecision } from '../../lib/rate-limiter.ts';
import { accountById, accountForLogin } from '../accounts/index.ts';
import { recordEvent } from '../activity/index.ts';
import { linkAfterSecondStep } from '../identities/index.ts';
import { finishSecondStep, passkeyOwner, proveWithPasskey, secondStepAccount, secondStepRequired, startSecondStep, type Method, type Proof } from '../mfa/index.ts';
import { perAccountClient, SESSION_RATE_RULES } from './sessions.limits.ts';
import { deviceOf, startSession, type Device, type LoginResult } from './sessions.issue.ts';

/**
 * An attempt as counted: `failed`, the count a right password or code takes back at once
 * (the device's, or the account's failed logins); `perClient`, the account-and-client count
 * (undefined for a known device), taken back only when the sign-in ends in a session, so
 * that limit counts failures and an owner signing in and out all afternoon is never refused.
 */
type Attempt = { failed: RateCheck; perClient?: RateCheck };

/**
 * Counts this attempt before its password is checked, so concurrent guesses cannot get more
 * checks than a limit allows. A device that logged in to this account before is limited only
 * by its own failures; once those run out it is a stranger like any other.
 */
async function reserveAttempt(deps: Deps, email: string, accountId: number | null, request: RequestInfo, device: Device | undefined): Promise<Attempt> {
  const { rateLimiter } = deps;
  if (device) {
    const check = { rule: SESSION_RATE_RULES.failedLoginsPerDevice, key: device.id };
    if ((await rateLimiter.hit([check])).allowed) return { failed: check };
  }
  const perClient = perAccountClient(email, request.ip);
  // Attempts the per-client limits refuse never reach the account's count: a single client
  // cannot run the account-wide cap down with requests that were never even tried.
  refuseLoginIfLimited(deps, await rateLimiter.hit([{ rule: SESSION_RATE_RULES.loginPerIp, key: rateLimitSubject(request.ip) }, perClient]), 'rate_limited');
  const check = { rule: SESSION_RATE_RULES.failedLoginsPerAccount, key: email };
  const decision = await rateLimiter.hit([check]);
  if (!decision.allowed) await recordEvent(deps.db, deps.clock, 'login.locked', { accountId }, request);
  refuseLoginIfLimited(deps, decision, 'locked');
  return { failed: check, perClient };
}

/** A sign-in that ended in a session gives its attempts back to the per-account-and-client counts (each step's, wherever it came from). */
async function giveBack(deps: Deps, attempts: Array<RateCheck | undefined>): Promise<void> {
  for (const attempt of attempts) if (attempt) await deps.rateLimiter.refund(attempt);
}

/** The metrics tell a client held back (rate_limited) from an account under attack (locked). */
function refuseLoginIfLimited(deps: Deps, decision: RateDecision, outcome: 'rate_limited' | 'locked'): void {
  if (!decision.allowed) deps.metrics.countLogin(outcome);
  refuseIfLimited(decision);
}

/**
 * Unknown e-mail and wrong password look the same: same body, same argon2 work (a dummy
 * hash), the attempt counts against the address and is logged either way, so lockouts
 * reveal nothing. `deviceToken` is set when this client should keep a new device cookie.
 * An account with a second factor gets no session yet: 403 MFA_REQUIRED with a token for
 * its second step, said only once the password matched.
 */
export async function login(deps: Deps, input: { email: string; password: string }, request: RequestInfo, credentials: Credentials): Promise<LoginResult> {
  const account = await accountForLogin(deps.db, input.email);
  const device = deviceOf(deps, credentials, account?.id);
  const attempt = await reserveAttempt(deps, input.email, account?.id ?? null, request, device);
  // An account made through a provider has no password: no password matches it.
  const matched = account?.password_hash ? await deps.passwords.verify(account.password_hash, input.password) : await deps.passwords.verifyDummy(input.password);
  if (!account || !matched) {
    deps.metrics.countLogin('failed');
    await recordEvent(deps.db, deps.clock, 'login.failed', { accountId: account?.id ?? null }, request);
    throw new AppError('INVALID_CREDENTIALS');
  }
  await deps.rateLimiter.refund(attempt.failed);
  if (!account.email_verified) {
    deps.metrics.countLogin('unverified');
    throw new AppError('EMAIL_NOT_VERIFIED');
  }
  const secondStep = await startSecondStep(deps, account.id, request, { via: 'password', attemptKey: attempt.perClient?.key });
  if (secondStep) {
    deps.metrics.countLogin('mfa_required');
    throw secondStepRequired(secondStep);
  }
  const result = await startSession(deps, account, request, device, 'password', account.password_hash!);
  await giveBack(deps, [attempt.perClient]);
  return result;
}

/**
 * The second step of a password sign-in: a code or passkey answer with its `mfa_token`. It
 * is limited like the password before it (per device for the owner's own devices, else per
 * client and account), so wrong codes run down the same failed-login cap.
 */
export async function loginSecondStep(deps: Deps, input: { mfa_token: string } & Proof, request: RequestInfo, credentials: Credentials): Promise<LoginResult> {
  const pending = await secondStepAccount(deps, input.mfa_token);
  const account = await accountById(deps.db, pending.accountId);
  if (!account) throw new AppError('INVALID_TOKEN');
  const device = deviceOf(deps, credentials, account.id);
  const attempt = await reserveAttempt(deps, account.email, account.id, request, device);
  let method: Method;
  try {
    method = await finishSecondStep(deps, pending, account, { code: input.code, response: input.response }, request);
  } catch (error) {
    if (error instanceof AppError && error.code === 'INVALID_CREDENTIALS') deps.metrics.countLogin('mfa_failed');
    throw error;
  }
  await deps.rateLimiter.refund(attempt.failed);
  // A provider sign-in that joined this account links the provider now, not before.
  if (pending.pendingLink) await linkAfterSecondStep(deps, account, pending.pendingLink, request);
  const result = await startSession(deps, account, request, device, pending.via, undefined, method);
  const firstStep = pending.attemptKey === undefined ? undefined : { rule: SESSION_RATE_RULES.loginPerAccountIp, key: pending.attemptKey };
  await giveBack(deps, [firstStep, attempt.perClient]);
  return result;
}

/**
 * A sign-in by a passkey alone (with user verification: something the person has and is or
 * knows). Limited per client like a password sign-in, and per account and client once the
 * passkey names its account; a passkey that does not verify is the same 401 as a wrong
 * password.
 */
export async function loginWithPasskey(deps: Deps, input: { response: AuthenticationResponseJSON }, request: RequestInfo, credentials: Credentials): Promise<LoginResult> {
  refuseLoginIfLimited(deps, await deps.rateLimiter.hit([{ rule: SESSION_RATE_RULES.loginPerIp, key: rateLimitSubject(request.ip) }]), 'rate_limited');
  const claimed = await passkeyOwner(deps.db, input.response);
  const claimedAccount = claimed === undefined ? undefined : await accountById(deps.db, claimed);
  const perClient = claimedAccount && perAccountClient(claimedAccount.email, request.ip);
  if (perClient) refuseLoginIfLimited(deps, await deps.rateLimiter.hit([perClient]), 'rate_limited');
  const accountId = await proveWithPasskey(deps, input.response, undefined);
  const account = accountId ? await accountById(deps.db, accountId) : undefined;
  if (!account) {
    deps.metrics.countLogin('failed');
    throw new AppError('INVALID_CREDENTIALS', 'The passkey could not be verified.');
  }
  const result = await startSession(deps, account, request, deviceOf(deps, credentials, account.id), 'passkey');
  await giveBack(deps, [perClient]);
  return result;
}
