import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import type { Queryable } from '../../lib/db.ts';
import { recordEvent, type AuditEvent } from '../activity/index.ts';
import { emitSecurityChange } from '../events/index.ts';
import { confirmPassword } from '../passwords/index.ts';
import type { AuthContext } from '../sessions/index.ts';
import { factorNotice, type FactorChange } from './mfa.mails.ts';
import { recoveryKeysOf, totpPlace, type Proof } from './mfa.proofs.ts';
import { newRecoveryCodes, recoveryCodeHashes } from './mfa.recovery.ts';
import * as repo from './mfa.repo.ts';
import { checkProof, givesProof, isSecondFactor, methodsOf, requireStepUp, stepUpRequired } from './mfa.step-up.ts';
import { newTotpSecret, totpStepOf, totpUrl } from './mfa.totp.ts';

/** The account's second factor as its owner sees it; never a secret. */
export async function mfaStatus(deps: Deps, auth: AuthContext) {
  const [factors, passkeys] = await Promise.all([repo.factorsOf(deps.db, auth.account.id), repo.passkeysOf(deps.db, auth.account.id)]);
  return {
    success: true as const,
    totp: factors.totp,
    passkeys: passkeys.map((passkey) => ({
      id: passkey.id,
      name: passkey.name,
      created_at: passkey.created_at.toISOString(),
      last_used_at: passkey.last_used_at?.toISOString() ?? null,
    })),
    recovery_codes_left: factors.recoveryCodes,
  };
}

/** Ten new codes in place of any older ones, stored as hashes; the plaintext is for this answer only. */
export async function issueRecoveryCodes(deps: Deps, tx: Queryable, accountId: number): Promise<string[]> {
  const codes = newRecoveryCodes();
  const [writeKey] = recoveryKeysOf(deps);
  await repo.replaceRecoveryCodes(tx, deps.clock, accountId, codes.map((code) => recoveryCodeHashes([writeKey], code)[0]));
  return codes;
}

/** A change to the account's factors: in its activity, in the same transaction, and mailed to its owner. */
export async function recordFactorChange(deps: Deps, tx: Queryable, auth: AuthContext, event: AuditEvent, change: FactorChange, request: RequestInfo, data?: Record<string, unknown>) {
  await recordEvent(tx, deps.clock, event, { accountId: auth.account.id }, request, data);
  await emitSecurityChange(tx, deps.clock, auth.account.id, 'mfa');
  return factorNotice(auth.account.email, auth.account.name, change, `${deps.config.publicUrl}/account`);
}

/** When its last factor goes, the account's recovery codes go with it: they would open nothing. */
export async function dropCodesIfNoFactor(tx: Queryable, accountId: number): Promise<void> {
  const factors = await repo.factorsOf(tx, accountId);
  if (!isSecondFactor(factors)) await repo.deleteRecoveryCodes(tx, accountId);
}

/**
 * A new authenticator secret, waiting for its first code (enableTotp). Needs the password
 * and, for an account that has a factor already, step-up. One that waited is replaced; one
 * that is on is a 409: turn it off first.
 */
export async function setupTotp(deps: Deps, auth: AuthContext, input: { password?: string } & Proof, request: RequestInfo) {
  const conflict = new AppError('CONFLICT', 'An authenticator app is already on: turn it off before setting up another.');
  await confirmPassword(deps, auth, input.password, request);
  // Said before step-up, so that a code is not spent on a change that cannot happen.
  if ((await repo.totpOf(deps.db, auth.account.id))?.enabled_at) throw conflict;
  await requireStepUp(deps, auth, input, request);
  const secret = newTotpSecret();
  const saved = await repo.savePendingTotp(deps.db, deps.clock, auth.account.id, deps.secretBox.seal(secret, totpPlace(auth.account.id)));
  if (!saved) throw conflict;
  return { success: true as const, secret, otpauth_url: totpUrl(secret, auth.account.email) };
}

/**
 * Turns the waiting authenticator on with a code from it. When it is the account's first
 * factor, ten recovery codes are made and shown in this answer only; otherwise the account
 * keeps the codes it has, and the list is empty.
 */
export async function enableTotp(deps: Deps, auth: AuthContext, input: { code: string }, request: RequestInfo) {
  const accountId = auth.account.id;
  const totp = await repo.totpOf(deps.db, accountId);
  if (totp?.enabled_at) throw new AppError('CONFLICT', 'The authenticator app is already on.');
  if (!totp) throw new AppError('INVALID_CODE', 'Set up the authenticator app first (POST /mfa/totp/setup).', { issues: [{ path: 'code', message: 'has no authenticator set up to check it against' }] });
  const step = totpStepOf(deps.secretBox.open(totp.secret_sealed, totpPlace(accountId)), input.code, deps.clock.now());
  const { codes, notice } = await deps.db.transaction(async (tx) => {
    const firstFactor = (await repo.factorsOf(tx, accountId)).passkeys === 0;
    if (step === undefined || !(await repo.acceptTotpStep(tx, deps.clock, accountId, step, { enable: true }))) return { codes: undefined, notice: undefined };
    const codes = firstFactor ? await issueRecoveryCodes(deps, tx, accountId) : [];
    return { codes, notice: await recordFactorChange(deps, tx, auth, 'mfa.enabled', 'totp_enabled', request, { factor: 'totp' }) };
  });
  if (!codes || !notice) throw new AppError('INVALID_CODE', undefined, { issues: [{ path: 'code', message: 'is not the current code of the authenticator app' }] });
  deps.mailer.sendInBackground(notice);
  return { success: true as const, recovery_codes: codes };
}

/** Needs the password and a code (from the app, or a recovery code). The account's recovery codes go if no factor is left. */
export async function disableTotp(deps: Deps, auth: AuthContext, input: { password?: string; code: string }, request: RequestInfo) {
  await confirmPassword(deps, auth, input.password, request);
  const totp = await repo.totpOf(deps.db, auth.account.id);
  if (!totp?.enabled_at) throw new AppError('CONFLICT', 'No authenticator app is on.');
  await checkProof(deps, auth.account, { code: input.code }, request);
  const notice = await deps.db.transaction(async (tx) => {
    await repo.deleteTotp(tx, auth.account.id);
    await dropCodesIfNoFactor(tx, auth.account.id);
    return recordFactorChange(deps, tx, auth, 'mfa.disabled', 'totp_disabled', request, { factor: 'totp' });
  });
  deps.mailer.sendInBackground(notice);
  return { success: true as const };
}

/** Needs the password and a proof of the factor; every older code stops working. */
export async function regenerateRecoveryCodes(deps: Deps, auth: AuthContext, input: { password?: string } & Proof, request: RequestInfo) {
  await confirmPassword(deps, auth, input.password, request);
  const factors = await repo.factorsOf(deps.db, auth.account.id);
  if (!isSecondFactor(factors)) throw new AppError('CONFLICT', 'Recovery codes go with a second factor: turn one on first.');
  // Its own proof, always (docs/API.md, Second factor): without one, what a step-up says.
  if (!givesProof(input)) throw stepUpRequired(await methodsOf(deps.db, auth.account.id));
  await checkProof(deps, auth.account, input, request);
  const { codes, notice } = await deps.db.transaction(async (tx) => ({
    codes: await issueRecoveryCodes(deps, tx, auth.account.id),
    notice: await recordFactorChange(deps, tx, auth, 'recovery_codes.regenerated', 'codes_regenerated', request),
  }));
  deps.mailer.sendInBackground(notice);
  return { success: true as const, recovery_codes: codes };
}

/** An administrator's reset: authenticator, passkeys, recovery codes and pending challenges all go. */
export async function removeAllFactors(tx: Queryable, accountId: number): Promise<{ totp: boolean; passkeys: number }> {
  const passkeys = await repo.passkeysOf(tx, accountId);
  const totp = await repo.deleteTotp(tx, accountId);
  for (const passkey of passkeys) await repo.deletePasskey(tx, accountId, passkey.id);
  await repo.deleteRecoveryCodes(tx, accountId);
  await repo.deleteChallengesOf(tx, accountId);
  return { totp, passkeys: passkeys.length };
}
