import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Credentials, RequestInfo } from '../../trpc/context.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { refuseIfLimited } from '../../errors/rate-limited.ts';
import { rateLimitSubject, type RateCheck, type RateDecision } from '../../lib/rate-limiter.ts';
import { accountById, accountForLogin } from '../accounts/index.ts';
import { recordEvent } from '../activity/index.ts';
import { linkAfterSecondStep } from '../identities/index.ts';
import { finishSecondStep, proveWithPasskey, secondStepAccount, startSecondStep, type Method, type Proof } from '../mfa/index.ts';
import type { Device } from './sessions.devices.ts';
import { SESSION_RATE_RULES } from './sessions.limits.ts';
import { deviceOf, startSession, type LoginResult } from './sessions.start.ts';

/**
 * Counts this attempt before its password is checked, so concurrent guesses cannot get more
 * checks than a limit allows. A device that logged in to this account before is limited only
 * by its own failures; once those run out it is a stranger like any other. Returns the count
 * to take back if the password turns out right.
 */
async function reserveAttempt(deps: Deps, email: string, request: RequestInfo, device: Device | undefined): Promise<RateCheck> {
  const { rateLimiter } = deps;
  if (device) {
    const check = { rule: SESSION_RATE_RULES.failedLoginsPerDevice, key: device.id };
    if ((await rateLimiter.hit([check])).allowed) return check;
  }
  const client = rateLimitSubject(request.ip);
  // Attempts the per-client limits refuse never reach the account's count: a single client
  // cannot run the account-wide cap down with requests that were never even tried.
  refuseLoginIfLimited(
    deps,
    await rateLimiter.hit([
      { rule: SESSION_RATE_RULES.loginPerIp, key: client },
      { rule: SESSION_RATE_RULES.loginPerAccountIp, key: `${email}|${client}` },
    ]),
    'rate_limited',
  );
  const check = { rule: SESSION_RATE_RULES.failedLoginsPerAccount, key: email };
  const decision = await rateLimiter.hit([check]);
  if (!decision.allowed) await recordEvent(deps.db, deps.clock, 'login.locked', { email }, request);
  refuseLoginIfLimited(deps, decision, 'locked');
  return check;
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
  const reservation = await reserveAttempt(deps, input.email, request, device);
  // An account made through a provider has no password: no password matches it.
  const matched = account?.password_hash ? await deps.passwords.verify(account.password_hash, input.password) : await deps.passwords.verifyDummy(input.password);
  if (!account || !matched) {
    deps.metrics.countLogin('failed');
    await recordEvent(deps.db, deps.clock, 'login.failed', { email: input.email }, request);
    throw new AppError('INVALID_CREDENTIALS');
  }
  await deps.rateLimiter.refund(reservation);
  if (!account.email_verified) {
    deps.metrics.countLogin('unverified');
    throw new AppError('EMAIL_NOT_VERIFIED');
  }
  const secondStep = await startSecondStep(deps, account.id, request);
  if (secondStep) {
    deps.metrics.countLogin('mfa_required');
    throw new AppError('MFA_REQUIRED', undefined, { details: secondStep });
  }
  return startSession(deps, account, request, device, 'password', account.password_hash!);
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
  const reservation = await reserveAttempt(deps, account.email, request, device);
  let method: Method;
  try {
    method = await finishSecondStep(deps, pending, account, { code: input.code, response: input.response }, request);
  } catch (error) {
    if (error instanceof AppError && error.code === 'INVALID_CREDENTIALS') deps.metrics.countLogin('mfa_failed');
    throw error;
  }
  await deps.rateLimiter.refund(reservation);
  // A provider sign-in that joined this account links the provider now, not before.
  if (pending.pendingLink) await linkAfterSecondStep(deps, account, pending.pendingLink, request);
  return startSession(deps, account, request, device, pending.via, undefined, method);
}

/**
 * A sign-in by a passkey alone (with user verification: something the person has and is or
 * knows). Limited per client like a password sign-in; a passkey that does not verify is the
 * same 401 as a wrong password.
 */
export async function loginWithPasskey(deps: Deps, input: { response: AuthenticationResponseJSON }, request: RequestInfo, credentials: Credentials): Promise<LoginResult> {
  refuseLoginIfLimited(deps, await deps.rateLimiter.hit([{ rule: SESSION_RATE_RULES.loginPerIp, key: rateLimitSubject(request.ip) }]), 'rate_limited');
  const accountId = await proveWithPasskey(deps, input.response, undefined);
  const account = accountId ? await accountById(deps.db, accountId) : undefined;
  if (!account) {
    deps.metrics.countLogin('failed');
    throw new AppError('INVALID_CREDENTIALS', 'The passkey could not be verified.');
  }
  return startSession(deps, account, request, deviceOf(deps, credentials, account.id), 'passkey');
}
