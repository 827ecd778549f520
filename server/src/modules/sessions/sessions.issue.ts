import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Credentials, RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import type { Context } from '../../trpc/context.ts';
import { AppError } from '../../errors/errors.ts';
import { apiKeyPlace, lockPasswordIfStill, toUser, type AccountRow, type User } from '../accounts/index.ts';
import { recordEvent, userAgentOf } from '../activity/index.ts';
import { insertSession } from './sessions.repo.ts';
import type { SecondStep } from './sessions.types.ts';

// The end of every sign-in, whatever its first step (password, passkey, identity provider):
// the session, the device cookie of a client new to the account, and the answer that hands
// both to the transport. Apart from sessions.login.ts so that the identities module can
// reach it through this module's face, which must not import the second factor.

export type LoginResult = { token: string; user: User; deviceToken: string | undefined };

/** How a session began: a password, a passkey alone, or an identity provider's name. */
export type SignInVia = 'password' | 'passkey' | (string & {});

/** The device cookie, when it is one this account gave out. */
export function deviceOf(deps: Deps, credentials: Credentials, accountId: number | undefined): Device | undefined {
  const presented = readDeviceToken(deps.deviceKeys, credentials.device);
  return accountId !== undefined && presented?.accountId === accountId ? presented : undefined;
}

/**
 * A new session for a sign-in that is complete, in the activity log, with a device cookie for
 * a new device. It records how it began (`via`, and `secondStep`: the second factor proved
 * after it, if any) and when the person proved who they are (auth_time).
 * `checkedPassword`: the hash a password sign-in checked. The session is made only while it
 * is still the account's, else 401 as for a wrong password: a reset or change that lands
 * between the check and the session would otherwise leave the old password a live session.
 */
export async function startSession(
  deps: Deps,
  account: AccountRow,
  request: RequestInfo,
  device: Device | undefined,
  via: SignInVia = 'password',
  checkedPassword?: string,
  secondStep?: SecondStep,
): Promise<LoginResult> {
  const sessionId = randomUUID();
  const { token, expiresAt } = await deps.jwt.sign({ accountId: account.id, sessionId });
  const byProvider = via !== 'password' && via !== 'passkey';
  const session = {
    id: sessionId,
    account_id: account.id,
    created_at: deps.clock.now(),
    expires_at: expiresAt,
    ip: request.ip || null,
    user_agent: userAgentOf(request),
    via,
    second_step: secondStep ?? null,
  };
  // The session and its line in the activity log commit together, and only while the
  // password checked is still the account's.
  const started = await deps.db.transaction(async (tx) => {
    if (checkedPassword !== undefined && !(await lockPasswordIfStill(tx, account.id, checkedPassword))) return false;
    await insertSession(tx, session);
    await recordEvent(tx, deps.clock, byProvider ? 'login.oauth' : 'login.succeeded', { accountId: account.id }, request, byProvider ? { provider: via } : undefined);
    return true;
  });
  if (!started) throw new AppError('INVALID_CREDENTIALS');
  const user = toUser(account, deps.secretBox.open(account.api_key_sealed, apiKeyPlace(account.id)));
  deps.metrics.countLogin('succeeded');
  return { token, user, deviceToken: device ? undefined : issueDeviceToken(deps.deviceKeys, account.id) };
}

/**
 * A complete sign-in: the login answer, and the session (with a device token for a client new
 * to the account) handed to the transport, which keeps them as the client's cookies.
 */
export function signedIn(ctx: Context, { token, user, deviceToken }: LoginResult) {
  const device = deviceToken ? { token: deviceToken, maxAgeSeconds: DEVICE_TTL_SECONDS } : undefined;
  ctx.response.signedIn = { token, maxAgeSeconds: ctx.deps.config.jwtTtlSeconds, device };
  return { success: true as const, token, user };
}

/** A logout: the transport forgets the session (clears its cookie). */
export function signedOut(ctx: Context) {
  ctx.response.signedOut = true;
  return { success: true as const };
}

/**
 * OWASP's "device cookies": a browser or client that has logged in to an account before
 * holds a token saying so, signed by us. Its login attempts are limited per device instead of
 * by the account-wide cap, so strangers failing on purpose cannot lock the owner out.
 */
const DEVICE_TTL_SECONDS = 365 * 24 * 3600;

export type Device = { accountId: number; id: string };

const PATTERN = /^d1\.([1-9][0-9]{0,9})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

const mac = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest();

/** `d1.<account id>.<random id>.<HMAC of the rest>`, signed with the first key; nothing stored server-side. */
export function issueDeviceToken(keys: Buffer[], accountId: number): string {
  const payload = `d1.${accountId}.${randomBytes(16).toString('base64url')}`;
  return `${payload}.${mac(keys[0], payload).toString('base64url')}`;
}

/** The device a token names, or undefined for anything none of the keys (DATA_KEY rotation) signed. */
export function readDeviceToken(keys: Buffer[], token: string | undefined): Device | undefined {
  const match = token ? PATTERN.exec(token) : null;
  if (!match) return undefined;
  const presented = Buffer.from(match[3], 'base64url');
  const signed = keys.some((key) => {
    const expected = mac(key, `d1.${match[1]}.${match[2]}`);
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  });
  return signed ? { accountId: Number(match[1]), id: match[2] } : undefined;
}
