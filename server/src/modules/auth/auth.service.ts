import { randomUUID } from 'node:crypto';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Credentials, RequestInfo } from '../../trpc/context.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { randomHex } from '../../lib/crypto.ts';
import type { Queryable } from '../../lib/db.ts';
import { rateLimitSubject, type RateCheck, type RateDecision } from '../../lib/rate-limiter.ts';
import { recordEvent, userAgentOf } from './auth.audit.ts';
import { ACCOUNT_COLUMNS, apiKeyHash, apiKeyPlace, toUser } from './auth.credentials.ts';
import { issueDeviceToken, readDeviceToken, type Device } from './auth.devices.ts';
import { AUTH_RATE_RULES, refuseIfLimited } from './auth.limits.ts';
import { alreadyRegisteredMail, verificationMail } from './auth.mails.ts';
import { checkNewPassword } from './auth.password-policy.ts';
import type { RegisterInput, User } from './auth.schemas.ts';
import { issueToken, useToken, voidTokens } from './auth.tokens.ts';
import { finishSecondStep, proveWithPasskey, secondStepAccount, startSecondStep, type Proof } from '../mfa/index.ts';
import type { AccountRow, AuthContext } from './auth.types.ts';

const REGISTERED_MESSAGE = 'Check your inbox: we sent a link to confirm your e-mail address.';
const RESENT_MESSAGE = 'If an unverified account uses this address, a new confirmation link is on its way.';

/** What a registration chose; it rides with its verification token until that is used. */
type Registration = { passwordHash: string; name: string; company: string | null };

function verifyUrl(deps: Deps, token: string): string {
  return `${deps.config.publicUrl}/verify-email?token=${encodeURIComponent(token)}`;
}

type ExistingAccount = { id: number; name: string; email_verified: boolean };

/** A new account; its id is taken first because the sealed API key is bound to it. */
async function insertAccount(deps: Deps, tx: Queryable, email: string, registration: Registration): Promise<number | undefined> {
  const apiKey = randomHex(32);
  const [{ id }] = await tx.query<{ id: number }>(`SELECT nextval(pg_get_serial_sequence('accounts', 'id'))::int AS id`);
  const now = deps.clock.now();
  const [created] = await tx.query<{ id: number }>(
    `INSERT INTO accounts (id, email, password_hash, name, company, api_key_hash, api_key_sealed, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (email) DO NOTHING RETURNING id`,
    [id, email, registration.passwordHash, registration.name, registration.company, apiKeyHash(deps, apiKey), deps.secretBox.seal(apiKey, apiKeyPlace(id)), now],
  );
  return created?.id;
}

/**
 * The same answer, and the same work, for a new and a taken address. A taken, unverified
 * address gets a link that carries this registration: whoever registered first (perhaps not
 * the mailbox's owner) does not decide the password once the owner confirms.
 */
export async function register(deps: Deps, input: RegisterInput, request: RequestInfo) {
  refuseIfLimited(
    await deps.rateLimiter.hit([
      { rule: AUTH_RATE_RULES.registerPerIp, key: rateLimitSubject(request.ip) },
      { rule: AUTH_RATE_RULES.registerPerAddress, key: input.email },
    ]),
  );
  // Before anything is looked up: a refusal says the same for a new and a taken address.
  await checkNewPassword(deps, input.password, { email: input.email, name: input.name, field: 'password' });
  const registration: Registration = { passwordHash: await deps.passwords.hash(input.password), name: input.name, company: input.company };
  const mail = await deps.db.transaction(async (tx) => {
    const created = await insertAccount(deps, tx, input.email, registration);
    if (created) {
      await recordEvent(tx, deps.clock, 'account.registered', { accountId: created }, request);
      const token = await issueToken(tx, deps.clock, created, 'verify', registration);
      return verificationMail(input.email, input.name, verifyUrl(deps, token));
    }
    const [existing] = await tx.query<ExistingAccount>('SELECT id, name, email_verified FROM accounts WHERE email = $1 FOR UPDATE', [input.email]);
    if (existing.email_verified) return alreadyRegisteredMail(input.email, existing.name, deps.config.publicUrl);
    const token = await issueToken(tx, deps.clock, existing.id, 'verify', registration);
    return verificationMail(input.email, input.name, verifyUrl(deps, token), { repeated: true });
  });
  deps.mailer.sendInBackground(mail);
  return { success: true as const, requires_verification: true as const, message: REGISTERED_MESSAGE };
}

/** The registration a used token carried, if any, becomes the account's; older tokens die with it. */
export async function verifyEmail(deps: Deps, token: string, request: RequestInfo) {
  const verified = await deps.db.transaction(async (tx) => {
    const used = await useToken(tx, deps.clock, 'verify', token);
    if (!used) return false;
    const [changed] = await tx.query(
      `UPDATE accounts SET email_verified = true, updated_at = $2,
         password_hash = COALESCE($3, password_hash), name = COALESCE($4, name),
         company = CASE WHEN $3::text IS NULL THEN company ELSE $5 END
       WHERE id = $1 AND NOT email_verified RETURNING id`,
      [used.account_id, deps.clock.now(), used.password_hash, used.name, used.company],
    );
    await voidTokens(tx, deps.clock, used.account_id, ['verify']);
    if (changed) await recordEvent(tx, deps.clock, 'email.verified', { accountId: used.account_id }, request);
    return true;
  });
  if (!verified) throw new AppError('INVALID_TOKEN');
  return { success: true as const, message: 'Your e-mail address is confirmed. You can log in now.' };
}

type LatestRegistration = { password_hash: string; name: string; company: string | null };

/** A resent link carries the latest registration, so resending never brings back an older one. */
export async function resendVerification(deps: Deps, email: string, request: RequestInfo) {
  refuseIfLimited(
    await deps.rateLimiter.hit([
      { rule: AUTH_RATE_RULES.resendPerIp, key: rateLimitSubject(request.ip) },
      { rule: AUTH_RATE_RULES.resendPerAddress, key: email },
    ]),
  );
  const mail = await deps.db.transaction(async (tx) => {
    const [account] = await tx.query<ExistingAccount>('SELECT id, name, email_verified FROM accounts WHERE email = $1 FOR UPDATE', [email]);
    if (!account || account.email_verified) return undefined;
    const [latest] = await tx.query<LatestRegistration>(
      `SELECT password_hash, name, company FROM email_tokens
       WHERE account_id = $1 AND purpose = 'verify' AND password_hash IS NOT NULL ORDER BY id DESC LIMIT 1`,
      [account.id],
    );
    const registration = latest && { passwordHash: latest.password_hash, name: latest.name, company: latest.company };
    const token = await issueToken(tx, deps.clock, account.id, 'verify', registration);
    return verificationMail(email, registration?.name ?? account.name, verifyUrl(deps, token));
  });
  if (mail) deps.mailer.sendInBackground(mail);
  return { success: true as const, message: RESENT_MESSAGE };
}

type LoginRow = AccountRow & { password_hash: string };

/**
 * Counts this attempt before its password is checked, so concurrent guesses cannot get more
 * checks than a limit allows. A device that logged in to this account before is limited only
 * by its own failures; once those run out it is a stranger like any other. Returns the count
 * to take back if the password turns out right.
 */
async function reserveAttempt(deps: Deps, email: string, request: RequestInfo, device: Device | undefined): Promise<RateCheck> {
  const { rateLimiter } = deps;
  if (device) {
    const check = { rule: AUTH_RATE_RULES.failedLoginsPerDevice, key: device.id };
    if ((await rateLimiter.hit([check])).allowed) return check;
  }
  const client = rateLimitSubject(request.ip);
  // Attempts the per-client limits refuse never reach the account's count: a single client
  // cannot run the account-wide cap down with requests that were never even tried.
  refuseLoginIfLimited(
    deps,
    await rateLimiter.hit([
      { rule: AUTH_RATE_RULES.loginPerIp, key: client },
      { rule: AUTH_RATE_RULES.loginPerAccountIp, key: `${email}|${client}` },
    ]),
    'rate_limited',
  );
  const check = { rule: AUTH_RATE_RULES.failedLoginsPerAccount, key: email };
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

export type LoginResult = { token: string; user: User; deviceToken: string | undefined };

/**
 * Unknown e-mail and wrong password look the same: same body, same argon2 work (a dummy
 * hash), the attempt counts against the address and is logged either way, so lockouts
 * reveal nothing. `deviceToken` is set when this client should keep a new device cookie.
 * An account with a second factor gets no session yet: 403 MFA_REQUIRED with a token for
 * its second step, said only once the password matched.
 */
export async function login(deps: Deps, input: { email: string; password: string }, request: RequestInfo, credentials: Credentials): Promise<LoginResult> {
  const [account] = await deps.db.query<LoginRow>(
    { name: 'auth_login_account', text: `SELECT ${ACCOUNT_COLUMNS}, a.password_hash FROM accounts a WHERE a.email = $1` },
    [input.email],
  );
  const device = deviceOf(deps, credentials, account?.id);
  const reservation = await reserveAttempt(deps, input.email, request, device);
  const matched = account ? await deps.passwords.verify(account.password_hash, input.password) : await deps.passwords.verifyDummy(input.password);
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
  return startSession(deps, account, request, device);
}

/**
 * The second step of a password sign-in: a code or passkey answer with its `mfa_token`. It
 * is limited like the password before it (per device for the owner's own devices, else per
 * client and account), so wrong codes run down the same failed-login cap.
 */
export async function loginSecondStep(deps: Deps, input: { mfa_token: string } & Proof, request: RequestInfo, credentials: Credentials): Promise<LoginResult> {
  const accountId = await secondStepAccount(deps, input.mfa_token);
  const [account] = await deps.db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE a.id = $1`, [accountId]);
  if (!account) throw new AppError('INVALID_TOKEN');
  const device = deviceOf(deps, credentials, account.id);
  const reservation = await reserveAttempt(deps, account.email, request, device);
  try {
    await finishSecondStep(deps, input.mfa_token, account, { code: input.code, response: input.response }, request);
  } catch (error) {
    if (error instanceof AppError && error.code === 'INVALID_CREDENTIALS') deps.metrics.countLogin('mfa_failed');
    throw error;
  }
  await deps.rateLimiter.refund(reservation);
  return startSession(deps, account, request, device);
}

/**
 * A sign-in by a passkey alone (with user verification: something the person has and is or
 * knows). Limited per client like a password sign-in; a passkey that does not verify is the
 * same 401 as a wrong password.
 */
export async function loginWithPasskey(deps: Deps, input: { response: AuthenticationResponseJSON }, request: RequestInfo, credentials: Credentials): Promise<LoginResult> {
  refuseLoginIfLimited(deps, await deps.rateLimiter.hit([{ rule: AUTH_RATE_RULES.loginPerIp, key: rateLimitSubject(request.ip) }]), 'rate_limited');
  const accountId = await proveWithPasskey(deps, input.response, undefined);
  const [account] = accountId ? await deps.db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE a.id = $1`, [accountId]) : [];
  if (!account) {
    deps.metrics.countLogin('failed');
    throw new AppError('INVALID_CREDENTIALS', 'The passkey could not be verified.');
  }
  return startSession(deps, account, request, deviceOf(deps, credentials, account.id));
}

/** The device cookie, when it is one this account gave out. */
function deviceOf(deps: Deps, credentials: Credentials, accountId: number | undefined): Device | undefined {
  const presented = readDeviceToken(deps.deviceKeys, credentials.device);
  return accountId !== undefined && presented?.accountId === accountId ? presented : undefined;
}

/** A new session for a sign-in that is complete, in the activity log, with a device cookie for a new device. */
async function startSession(deps: Deps, account: AccountRow, request: RequestInfo, device: Device | undefined): Promise<LoginResult> {
  const sessionId = randomUUID();
  const { token, expiresAt } = await deps.jwt.sign({ accountId: account.id, sessionId });
  await deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    await tx.query(
      {
        name: 'auth_create_session',
        text: 'INSERT INTO sessions (id, account_id, created_at, expires_at, last_used_at, ip, user_agent) VALUES ($1, $2, $3, $4, $3, $5, $6)',
      },
      [sessionId, account.id, now, expiresAt, request.ip || null, userAgentOf(request)],
    );
    await recordEvent(tx, deps.clock, 'login.succeeded', { accountId: account.id }, request);
  });
  const user = toUser(account, deps.secretBox.open(account.api_key_sealed, apiKeyPlace(account.id)));
  deps.metrics.countLogin('succeeded');
  return { token, user, deviceToken: device ? undefined : issueDeviceToken(deps.deviceKeys, account.id) };
}

export function me(auth: AuthContext): User {
  return toUser(auth.account, auth.apiKey);
}

/** Only a session can be logged out; an API key is permanent. */
export async function logout(deps: Deps, auth: AuthContext, request: RequestInfo): Promise<void> {
  if (!auth.sessionId) throw new AppError('UNAUTHORIZED', 'Log out with the session token, not the API key.');
  await deps.db.transaction(async (tx) => {
    await tx.query('UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [auth.sessionId, deps.clock.now()]);
    await recordEvent(tx, deps.clock, 'logout', { accountId: auth.account.id }, request);
  });
  // The trigger's notice reaches this instance a moment later; the caller may ask again sooner.
  deps.authCache.evictAccount(auth.account.id);
}
