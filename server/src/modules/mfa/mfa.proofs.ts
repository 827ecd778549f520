import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { deriveKey, sha256 } from '../../lib/crypto.ts';
import type { Queryable } from '../../lib/db.ts';
import { recordEvent } from '../activity/index.ts';
import { factorNotice } from './mfa.mails.ts';
import { challengeOf, relyingPartyOf, verifyAssertion } from './mfa.webauthn.ts';
import { normaliseRecoveryCode, recoveryCodeHashes } from './mfa.recovery.ts';
import * as repo from './mfa.repo.ts';
import { totpStepOf } from './mfa.totp.ts';

/** What proves the second factor: a code (authenticator or recovery) or a passkey assertion. */
export type Proof = { code?: string; response?: AuthenticationResponseJSON };

export type Method = 'totp' | 'passkey' | 'recovery_code';

/** Whose proof it is: the account, with what its notices need. */
export type ProofAccount = { id: number; email: string; name: string };

/** Keys of the recovery codes' hashes, one per DATA_KEY: the first writes. */
export const recoveryKeysOf = (deps: Deps) => deps.config.dataKeys.map((key) => deriveKey(key, 'recovery-code'));

export const totpPlace = (accountId: number) => ({ column: 'mfa_totp.secret_sealed', row: accountId });

async function proveWithCode(deps: Deps, account: ProofAccount, code: string, request: RequestInfo): Promise<Method | undefined> {
  const totp = await repo.totpOf(deps.db, account.id);
  if (totp?.enabled_at) {
    const step = totpStepOf(deps.secretBox.open(totp.secret_sealed, totpPlace(account.id)), code, deps.clock.now());
    // A code is accepted once: a replay inside its window finds its step taken.
    if (step !== undefined) return (await repo.acceptTotpStep(deps.db, deps.clock, account.id, step)) ? 'totp' : undefined;
  }
  const recovery = normaliseRecoveryCode(code);
  if (!recovery) return undefined;
  const used = await deps.db.transaction(async (tx) => {
    if (!(await repo.useRecoveryCode(tx, deps.clock, account.id, recoveryCodeHashes(recoveryKeysOf(deps), recovery)))) return false;
    await recordEvent(tx, deps.clock, 'recovery_code.used', { accountId: account.id }, request);
    return true;
  });
  if (!used) return undefined;
  deps.mailer.sendInBackground(factorNotice(account.email, account.name, 'code_used', `${deps.config.publicUrl}/account`));
  return 'recovery_code';
}

/** The account a passkey answer claims to be of (its credential's), before anything of it is checked: whose limits it counts against. */
export async function passkeyOwner(db: Queryable, response: AuthenticationResponseJSON): Promise<number | undefined> {
  const passkey = typeof response?.id === 'string' ? await repo.passkeyByCredential(db, response.id) : undefined;
  return passkey?.account_id;
}

/**
 * A passkey assertion of this account, to a challenge this service issued for sign-in (for
 * this account, or for anyone: a discoverable one), used once. Returns the passkey's account
 * when `accountId` is undefined (a sign-in by passkey alone).
 */
export async function proveWithPasskey(deps: Deps, response: AuthenticationResponseJSON, accountId: number | undefined): Promise<number | undefined> {
  const challenge = challengeOf(response);
  const passkey = typeof response?.id === 'string' ? await repo.passkeyByCredential(deps.db, response.id) : undefined;
  if (!challenge || !passkey || (accountId !== undefined && passkey.account_id !== accountId)) return undefined;
  const issued = await repo.liveChallenge(deps.db, deps.clock, 'passkey_login', sha256(challenge));
  if (!issued || (issued.account_id !== null && issued.account_id !== passkey.account_id)) return undefined;
  const counter = await verifyAssertion(relyingPartyOf(deps.config.publicUrl), response, passkey, challenge);
  if (counter === undefined) return undefined;
  const used = await repo.useChallengeWithPasskey(deps.db, deps.clock, issued.id, { id: passkey.id, seenCounter: passkey.counter, newCounter: counter });
  return used ? passkey.account_id : undefined;
}

/** Which way the proof held, or undefined when it did not. Spends what it used: a TOTP step, a recovery code, a challenge. */
export async function verifyProof(deps: Deps, account: ProofAccount, proof: Proof, request: RequestInfo): Promise<Method | undefined> {
  if (proof.response !== undefined) return (await proveWithPasskey(deps, proof.response, account.id)) === account.id ? 'passkey' : undefined;
  if (proof.code !== undefined) return proveWithCode(deps, account, proof.code, request);
  return undefined;
}

/** The refusal of a wrong proof, naming the field it came in. */
export function invalidProof(proof: Proof): AppError {
  const path = proof.response !== undefined ? 'response' : 'code';
  const message = path === 'response' ? 'is not a valid passkey answer to a live challenge' : 'is wrong, already used or expired';
  return new AppError('INVALID_CODE', undefined, { issues: [{ path, message }] });
}
