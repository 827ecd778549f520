// The second factor's face: what accounts/, sessions/, passwords/ and keys/, the admin surface
// and the transports use. Its procedures (mfa.router.ts) are merged into auth.* by
// server/src/router.ts.
import { inBatches } from '../../lib/batches.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Queryable } from '../../lib/db.ts';
import { AppError } from '../../errors/errors.ts';
import { purgeExpiredChallenges, purgeExpiredStepUps } from './mfa.repo.ts';
import { hasSecondFactor } from './mfa.step-up.ts';

export { endStepUp } from './mfa.repo.ts';

export { MFA_TABLES } from './mfa.model.ts';
export { passkeySignInOptions } from './mfa.passkeys.ts';
export { passkeyOwner, proveWithPasskey, type Method, type Proof } from './mfa.proofs.ts';
export { factorNotice } from './mfa.mails.ts';
export { removeAllFactors } from './mfa.service.ts';
export { accountsWithSecondFactor, countAccountsWithSecondFactor } from './mfa.repo.ts';
export { finishSecondStep, hasSecondFactor, requireStepUp, secondStepAccount, secondStepRequired, startSecondStep } from './mfa.step-up.ts';
export { loginMfaInput, loginPasskeyInput, optionsOutput, passkeyLoginOptionsInput, stepUpProof } from './mfa.schemas.ts';

const PURGE_BATCH = 1000;

/** The worker's tidying: sign-in tokens and WebAuthn challenges past their five minutes, step-ups that ran out. */
export async function purgeExpiredMfaState(db: Queryable, clock: Clock): Promise<number> {
  const challenges = await inBatches(() => purgeExpiredChallenges(db, clock, PURGE_BATCH), PURGE_BATCH);
  return challenges + (await purgeExpiredStepUps(db, clock));
}

/**
 * MFA_REQUIRED_ROLES: an account of such a role without a second factor may sign in, see
 * itself, set a factor up and end sessions, and nothing else (403 MFA_SETUP_REQUIRED):
 * every procedure but those checks it (trpc/procedures.ts), and so does connecting an
 * identity provider, which is no procedure. Accounts of other roles pay nothing.
 */
export async function refuseUntilMfaSetUp(deps: { config: { mfaRequiredRoles: string[] }; db: Queryable }, account: { id: number; role: string }): Promise<void> {
  const roles = deps.config.mfaRequiredRoles;
  if (!roles.length || !roles.includes(account.role)) return;
  if (!(await hasSecondFactor(deps.db, account.id))) {
    throw new AppError('MFA_SETUP_REQUIRED', `Accounts with the role ${account.role} must turn on a second factor (an authenticator app or a passkey) first.`);
  }
}
