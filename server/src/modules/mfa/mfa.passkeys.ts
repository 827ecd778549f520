import { createHmac, randomUUID } from 'node:crypto';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { deriveKey, sha256 } from '../../lib/crypto.ts';
import { refuseIfLimited } from '../../errors/rate-limited.ts';
import { rateLimitSubject } from '../../lib/rate-limiter.ts';
import { confirmPassword } from '../passwords/index.ts';
import { SESSION_RATE_RULES, type AuthContext } from '../sessions/index.ts';
import { authenticationOptions, CHALLENGE_TTL_MS, challengeOf, registrationOptions, relyingPartyOf, verifyRegistration } from './mfa.webauthn.ts';
import type { Proof } from './mfa.proofs.ts';
import * as repo from './mfa.repo.ts';
import { dropCodesIfNoFactor, issueRecoveryCodes, recordFactorChange } from './mfa.service.ts';
import { isSecondFactor, MFA_TOKEN_MAX_FAILURES, requireStepUp, SIGN_IN_GONE } from './mfa.step-up.ts';

/**
 * The account's WebAuthn user id, the same on all its passkeys so an authenticator keeps one
 * entry for it: the one its passkeys have, else derived from the account id under a key of
 * DATA_KEY's (opaque, and the same for the options and the passkey they make).
 */
function userHandleFor(deps: Deps, accountId: number, existing: repo.PasskeyRow[]): string {
  if (existing[0]) return existing[0].user_handle;
  const key = deriveKey(deps.config.dataKeys[0], 'webauthn-user');
  return createHmac('sha256', key).update(String(accountId)).digest().subarray(0, 16).toString('base64url');
}

/**
 * Creation options for a new passkey of the signed-in account: needs the password and, when
 * the account has a factor already, step-up. The challenge is kept (as its hash) for five
 * minutes and serves once.
 */
export async function passkeyOptions(deps: Deps, auth: AuthContext, input: { password?: string } & Proof, request: RequestInfo) {
  await confirmPassword(deps, auth, input.password, request);
  await requireStepUp(deps, auth, input, request);
  const existing = await repo.passkeysOf(deps.db, auth.account.id);
  const handle = userHandleFor(deps, auth.account.id, existing);
  const options = await registrationOptions(relyingPartyOf(deps.config.publicUrl), { handle, email: auth.account.email, name: auth.account.name }, existing);
  await repo.insertChallenge(deps.db, deps.clock, 'passkey_register', sha256(options.challenge), auth.account.id, CHALLENGE_TTL_MS);
  return { success: true as const, options };
}

const INVALID_ATTESTATION = new AppError('INVALID_CODE', 'The passkey could not be verified: ask for new options and try again.', {
  issues: [{ path: 'response', message: 'is not a valid answer to live options of this account' }],
});

/**
 * Stores the passkey the browser made for those options (no step-up of its own: the options
 * needed it). When it is the account's first factor, ten recovery codes come with the answer.
 */
export async function addPasskey(deps: Deps, auth: AuthContext, input: { name?: string; response: RegistrationResponseJSON }, request: RequestInfo) {
  const accountId = auth.account.id;
  const challenge = challengeOf(input.response);
  const issued = challenge && (await repo.liveChallenge(deps.db, deps.clock, 'passkey_register', sha256(challenge)));
  if (!challenge || !issued || issued.account_id !== accountId) throw INVALID_ATTESTATION;
  const credential = await verifyRegistration(relyingPartyOf(deps.config.publicUrl), input.response, challenge);
  if (!credential) throw INVALID_ATTESTATION;
  const result = await deps.db.transaction(async (tx) => {
    if (!(await repo.useChallenge(tx, deps.clock, issued.id))) return undefined;
    const factors = await repo.factorsOf(tx, accountId);
    const existing = await repo.passkeysOf(tx, accountId);
    const passkey = {
      id: randomUUID(),
      account_id: accountId,
      credential_id: credential.credentialId,
      public_key: credential.publicKey,
      counter: String(credential.counter),
      transports: credential.transports,
      user_handle: userHandleFor(deps, accountId, existing),
      name: input.name ?? `Passkey ${existing.length + 1}`,
      created_at: deps.clock.now(),
    };
    await repo.insertPasskey(tx, passkey);
    const codes = !isSecondFactor(factors) ? await issueRecoveryCodes(deps, tx, accountId) : undefined;
    const notice = await recordFactorChange(deps, tx, auth, 'passkey.added', 'passkey_added', request, { passkey: passkey.id });
    return { passkey, codes, notice };
  });
  if (!result) throw INVALID_ATTESTATION;
  deps.mailer.sendInBackground(result.notice);
  const { passkey, codes } = result;
  const shown = { id: passkey.id, name: passkey.name, created_at: passkey.created_at.toISOString(), last_used_at: null };
  return codes ? { success: true as const, passkey: shown, recovery_codes: codes } : { success: true as const, passkey: shown };
}

/** Needs the password and step-up. The account's recovery codes go if no factor is left. */
export async function removePasskey(deps: Deps, auth: AuthContext, input: { id: string; password?: string } & Proof, request: RequestInfo) {
  await confirmPassword(deps, auth, input.password, request);
  await requireStepUp(deps, auth, input, request);
  const notice = await deps.db.transaction(async (tx) => {
    if (!(await repo.deletePasskey(tx, auth.account.id, input.id))) return undefined;
    await dropCodesIfNoFactor(tx, auth.account.id);
    return recordFactorChange(deps, tx, auth, 'passkey.removed', 'passkey_removed', request, { passkey: input.id });
  });
  if (!notice) throw new AppError('NOT_FOUND', 'No passkey of this account has that id.');
  deps.mailer.sendInBackground(notice);
  return { success: true as const };
}

/**
 * Request options for a passkey: any passkey of this site for a sign-in by passkey alone, or,
 * with the `mfa_token` of a password sign-in, that account's passkeys for its second step.
 * Public, and each call keeps a challenge: counted against the client's sign-in limit, as a
 * sign-in is (the mfa_token's own limits bound its second step).
 */
export async function passkeySignInOptions(deps: Deps, input: { mfa_token?: string }, request: RequestInfo) {
  refuseIfLimited(await deps.rateLimiter.hit([{ rule: SESSION_RATE_RULES.loginPerIp, key: rateLimitSubject(request.ip) }]));
  const rp = relyingPartyOf(deps.config.publicUrl);
  let accountId: number | null = null;
  let allowed: repo.PasskeyRow[] | undefined;
  if (input.mfa_token !== undefined) {
    const pending = await repo.liveChallenge(deps.db, deps.clock, 'mfa_token', sha256(input.mfa_token), { maxFailures: MFA_TOKEN_MAX_FAILURES });
    if (!pending?.account_id) throw new AppError('INVALID_TOKEN', SIGN_IN_GONE);
    accountId = pending.account_id;
    allowed = await repo.passkeysOf(deps.db, accountId);
  }
  const options = await authenticationOptions(rp, allowed);
  await repo.insertChallenge(deps.db, deps.clock, 'passkey_login', sha256(options.challenge), accountId, CHALLENGE_TTL_MS);
  return { success: true as const, options };
}
