import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors.ts';
import { randomHex, randomToken, sha256 } from '../../lib/crypto.ts';
import type { Queryable } from '../../lib/db.ts';
import type { RateDecision, RateRule } from '../../lib/rate-limiter.ts';
import { ACCOUNT_COLUMNS, apiKeyHash, toUser, type AccountRow, type AuthContext } from './auth.credentials.ts';
import { alreadyRegisteredMail, verificationMail } from './auth.mails.ts';
import type { RegisterInput, User } from './auth.schemas.ts';

const VERIFY_TOKEN_TTL_MS = 24 * 3600 * 1000;

export const AUTH_RATE_RULES = {
  loginPerIp: { name: 'login-ip', limit: 100, windowSeconds: 15 * 60 },
  loginPerAccountIp: { name: 'login-account-ip', limit: 10, windowSeconds: 15 * 60 },
  failedLoginsPerAccount: { name: 'login-failed', limit: 100, windowSeconds: 3600 },
  registerPerIp: { name: 'register-ip', limit: 20, windowSeconds: 3600 },
  registerPerAddress: { name: 'register-address', limit: 5, windowSeconds: 3600 },
  resendPerIp: { name: 'resend-ip', limit: 20, windowSeconds: 3600 },
  resendPerAddress: { name: 'resend-address', limit: 5, windowSeconds: 3600 },
} satisfies Record<string, RateRule>;

function refuseIfLimited(decision: RateDecision): void {
  if (!decision.allowed) throw new AppError('RATE_LIMITED', undefined, { retryAfterSeconds: decision.retryAfterSeconds });
}

const REGISTERED_MESSAGE = 'Check your inbox: we sent a link to confirm your e-mail address.';
const RESENT_MESSAGE = 'If an unverified account uses this address, a new confirmation link is on its way.';

/**
 * A new token voids the older ones of the same account, so only the latest mail works.
 * Returns the plaintext; only its hash is stored.
 */
async function issueVerifyToken(deps: Deps, tx: Queryable, accountId: number): Promise<string> {
  const now = deps.clock.now();
  const token = randomToken(32);
  await tx.query(`UPDATE email_tokens SET used_at = $2 WHERE account_id = $1 AND purpose = 'verify' AND used_at IS NULL`, [accountId, now]);
  await tx.query(
    `INSERT INTO email_tokens (account_id, purpose, token_hash, created_at, expires_at) VALUES ($1, 'verify', $2, $3, $4)`,
    [accountId, sha256(token), now, new Date(now.getTime() + VERIFY_TOKEN_TTL_MS)],
  );
  return token;
}

function verifyUrl(deps: Deps, token: string): string {
  return `${deps.config.publicUrl}/verify-email?token=${encodeURIComponent(token)}`;
}

type ExistingAccount = { id: number; name: string; email_verified: boolean };

/** The same answer, and the same work, for a new and a taken address. */
export async function register(deps: Deps, input: RegisterInput, ip: string) {
  refuseIfLimited(
    await deps.rateLimiter.hit([
      { rule: AUTH_RATE_RULES.registerPerIp, key: ip },
      { rule: AUTH_RATE_RULES.registerPerAddress, key: input.email },
    ]),
  );
  const passwordHash = await deps.passwords.hash(input.password);
  const apiKey = randomHex(32);
  const mail = await deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    const [created] = await tx.query<{ id: number }>(
      `INSERT INTO accounts (email, password_hash, name, company, api_key_hash, api_key_sealed, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (email) DO NOTHING RETURNING id`,
      [input.email, passwordHash, input.name, input.company, apiKeyHash(deps, apiKey), deps.secretBox.seal(apiKey), now],
    );
    if (created) return verificationMail(input.email, input.name, verifyUrl(deps, await issueVerifyToken(deps, tx, created.id)));
    const [existing] = await tx.query<ExistingAccount>('SELECT id, name, email_verified FROM accounts WHERE email = $1', [input.email]);
    if (existing.email_verified) return alreadyRegisteredMail(input.email, existing.name, deps.config.publicUrl);
    return verificationMail(input.email, existing.name, verifyUrl(deps, await issueVerifyToken(deps, tx, existing.id)));
  });
  deps.mailer.sendInBackground(mail);
  return { success: true as const, requires_verification: true as const, message: REGISTERED_MESSAGE };
}

export async function verifyEmail(deps: Deps, token: string) {
  const verified = await deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    const [used] = await tx.query<{ account_id: number }>(
      `UPDATE email_tokens SET used_at = $2
       WHERE token_hash = $1 AND purpose = 'verify' AND used_at IS NULL AND expires_at > $2
       RETURNING account_id`,
      [sha256(token), now],
    );
    if (!used) return false;
    await tx.query('UPDATE accounts SET email_verified = true, updated_at = $2 WHERE id = $1', [used.account_id, now]);
    return true;
  });
  if (!verified) throw new AppError('INVALID_TOKEN');
  return { success: true as const, message: 'Your e-mail address is confirmed. You can log in now.' };
}

export async function resendVerification(deps: Deps, email: string, ip: string) {
  refuseIfLimited(
    await deps.rateLimiter.hit([
      { rule: AUTH_RATE_RULES.resendPerIp, key: ip },
      { rule: AUTH_RATE_RULES.resendPerAddress, key: email },
    ]),
  );
  const mail = await deps.db.transaction(async (tx) => {
    const [account] = await tx.query<ExistingAccount>(
      'SELECT id, name, email_verified FROM accounts WHERE email = $1 FOR UPDATE',
      [email],
    );
    if (!account || account.email_verified) return undefined;
    return verificationMail(email, account.name, verifyUrl(deps, await issueVerifyToken(deps, tx, account.id)));
  });
  if (mail) deps.mailer.sendInBackground(mail);
  return { success: true as const, message: RESENT_MESSAGE };
}

type LoginRow = AccountRow & { password_hash: string };

/**
 * Unknown e-mail and wrong password look the same: same body, same argon2 work (a dummy
 * hash), and the failure counts against the address either way, so lockouts reveal nothing.
 */
export async function login(deps: Deps, input: { email: string; password: string }, ip: string) {
  const { rateLimiter } = deps;
  refuseIfLimited(
    await rateLimiter.hit([
      { rule: AUTH_RATE_RULES.loginPerIp, key: ip },
      { rule: AUTH_RATE_RULES.loginPerAccountIp, key: `${input.email}|${ip}` },
    ]),
  );
  refuseIfLimited(await rateLimiter.peek(AUTH_RATE_RULES.failedLoginsPerAccount, input.email));
  const [account] = await deps.db.query<LoginRow>(
    { name: 'auth_login_account', text: `SELECT ${ACCOUNT_COLUMNS}, a.password_hash FROM accounts a WHERE a.email = $1` },
    [input.email],
  );
  const matched = account ? await deps.passwords.verify(account.password_hash, input.password) : await deps.passwords.verifyDummy(input.password);
  if (!account || !matched) {
    await rateLimiter.hit([{ rule: AUTH_RATE_RULES.failedLoginsPerAccount, key: input.email }]);
    throw new AppError('INVALID_CREDENTIALS');
  }
  if (!account.email_verified) throw new AppError('EMAIL_NOT_VERIFIED');
  const sessionId = randomUUID();
  const { token, expiresAt } = await deps.jwt.sign({ accountId: account.id, sessionId });
  await deps.db.query(
    { name: 'auth_create_session', text: 'INSERT INTO sessions (id, account_id, created_at, expires_at) VALUES ($1, $2, $3, $4)' },
    [sessionId, account.id, deps.clock.now(), expiresAt],
  );
  return { token, user: toUser(account, deps.secretBox.open(account.api_key_sealed)) };
}

export function me(auth: AuthContext): User {
  return toUser(auth.account, auth.apiKey);
}

/** Only a session can be logged out; an API key is permanent. */
export async function logout(deps: Deps, auth: AuthContext): Promise<void> {
  if (!auth.sessionId) throw new AppError('UNAUTHORIZED', 'Log out with the session token, not the API key.');
  await deps.db.query('UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [auth.sessionId, deps.clock.now()]);
  // The trigger's notice reaches this instance a moment later; the caller may ask again sooner.
  deps.authCache.evictAccount(auth.account.id);
}
