import { randomUUID } from 'node:crypto';
import type { Credentials, RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { lockPasswordIfStill, toUser, type AccountRow, type User } from '../accounts/index.ts';
import { recordEvent, userAgentOf } from '../activity/index.ts';
import { apiKeyPlace } from '../keys/index.ts';
import { issueDeviceToken, readDeviceToken, type Device } from './sessions.devices.ts';
import { insertSession } from './sessions.repo.ts';
import type { SecondStep } from './sessions.types.ts';

// The end of every sign-in, whatever its first step (password, passkey, identity provider):
// apart from sessions.login.ts so that the identities module can reach it through this
// module's face, which must not import the second factor.

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
