import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { refuseIfLimited } from '../../errors/rate-limited.ts';
import { randomHex } from '../../lib/crypto.ts';
import type { Queryable } from '../../lib/db.ts';
import { rateLimitSubject } from '../../lib/rate-limiter.ts';
import { recordEvent } from '../activity/index.ts';
import { apiKeyHash } from '../keys/index.ts';
import { checkNewPassword } from '../passwords/index.ts';
import { apiKeyPlace } from './accounts.repo.ts';
import { promoteIfListed, promotionLogged } from './accounts.admin-emails.ts';
import { emitAccountEvent } from './accounts.events.ts';
import { ACCOUNT_RATE_RULES } from './accounts.limits.ts';
import { alreadyRegisteredMail, verificationMail } from './accounts.mails.ts';
import * as repo from './accounts.repo.ts';
import type { RegisterInput } from './accounts.schemas.ts';
import { issueToken, useToken, voidTokens } from './accounts.tokens.ts';
import { verificationMailFor, verifyUrl } from './accounts.verification.ts';
import { forgetCachedAccount } from '../sessions/index.ts';

const REGISTERED_MESSAGE = 'Check your inbox: we sent a link to confirm your e-mail address.';
const RESENT_MESSAGE = 'If an unverified account uses this address, a new confirmation link is on its way.';

/** What a registration chose; it rides with its verification token until that is used. */
type Registration = { passwordHash: string; name: string; company: string | null };


/** A new account; its id is taken first because the sealed API key is bound to it. */
async function createAccount(deps: Deps, tx: Queryable, email: string, registration: Registration): Promise<number | undefined> {
  const apiKey = randomHex(32);
  const id = await repo.nextAccountId(tx);
  return repo.insertAccount(tx, {
    id,
    email,
    password_hash: registration.passwordHash,
    name: registration.name,
    company: registration.company,
    email_verified: false,
    api_key_hash: apiKeyHash(deps, apiKey),
    api_key_sealed: deps.secretBox.seal(apiKey, apiKeyPlace(id)),
    created_at: deps.clock.now(),
  });
}

/**
 * The same answer, and the same work, for a new and a taken address. A taken, unverified
 * address gets a link that carries this registration: whoever registered first (perhaps not
 * the mailbox's owner) does not decide the password once the owner confirms.
 */
export async function register(deps: Deps, input: RegisterInput, request: RequestInfo) {
  refuseIfLimited(
    await deps.rateLimiter.hit([
      { rule: ACCOUNT_RATE_RULES.registerPerIp, key: rateLimitSubject(request.ip) },
      { rule: ACCOUNT_RATE_RULES.registerPerAddress, key: input.email },
    ]),
  );
  // Before anything is looked up: a refusal says the same for a new and a taken address.
  await checkNewPassword(deps, input.password, { email: input.email, name: input.name, field: 'password' });
  const registration: Registration = { passwordHash: await deps.passwords.hash(input.password), name: input.name, company: input.company };
  const mail = await deps.db.transaction(async (tx) => {
    const created = await createAccount(deps, tx, input.email, registration);
    if (created) {
      await recordEvent(tx, deps.clock, 'account.registered', { accountId: created }, request);
      const token = await issueToken(tx, deps.clock, created, 'verify', registration);
      return verificationMail(input.email, input.name, verifyUrl(deps.config.publicUrl, token));
    }
    // The insert conflicted on this address, so an account has it.
    const existing = (await repo.lockAccount(tx, { email: input.email }))!;
    if (existing.email_verified) return alreadyRegisteredMail(input.email, existing.name, deps.config.publicUrl);
    const token = await issueToken(tx, deps.clock, existing.id, 'verify', registration);
    return verificationMail(input.email, input.name, verifyUrl(deps.config.publicUrl, token), { repeated: true });
  });
  deps.mailer.sendInBackground(mail);
  return { success: true as const, requires_verification: true as const, message: REGISTERED_MESSAGE };
}

/** The registration a used token carried, if any, becomes the account's; older tokens die with it. */
export async function verifyEmail(deps: Deps, token: string, request: RequestInfo) {
  const verified = await deps.db.transaction(async (tx) => {
    const used = await useToken(tx, deps.clock, 'verify', token);
    if (!used) return undefined;
    const changed = await repo.markVerified(tx, used, deps.clock.now());
    await voidTokens(tx, deps.clock, used.account_id, ['verify']);
    if (!changed) return { promoted: undefined };
    await recordEvent(tx, deps.clock, 'email.verified', { accountId: used.account_id }, request);
    const account = (await repo.lockAccount(tx, { id: used.account_id }))!;
    const promoted = await promoteIfListed(tx, deps, account, request);
    // After the promotion: the event shows the account as it is once this commits.
    await emitAccountEvent(tx, deps.clock, used.account_id);
    return { promoted: promoted ? account.id : undefined };
  });
  if (!verified) throw new AppError('INVALID_TOKEN');
  if (verified.promoted !== undefined) {
    // This instance at once (its API key may have been looked up before); the others by the row's notice.
    forgetCachedAccount(deps, verified.promoted);
    promotionLogged(deps, verified.promoted);
  }
  return { success: true as const, message: 'Your e-mail address is confirmed. You can log in now.' };
}

/**
 * A resent link carries the latest registration, so resending never brings back an older one.
 * An address registered again since its first registration gets no link at all: the latest
 * registration may not be the resender's (resending is open to anyone), and confirming it
 * would hand the account to whoever made it. Registering again mails one's own link.
 */
export async function resendVerification(deps: Deps, email: string, request: RequestInfo) {
  refuseIfLimited(
    await deps.rateLimiter.hit([
      { rule: ACCOUNT_RATE_RULES.resendPerIp, key: rateLimitSubject(request.ip) },
      { rule: ACCOUNT_RATE_RULES.resendPerAddress, key: email },
    ]),
  );
  const mail = await deps.db.transaction(async (tx) => {
    const account = await repo.lockAccount(tx, { email });
    if (!account || account.email_verified) return undefined;
    return verificationMailFor(tx, deps.clock, deps.config.publicUrl, account);
  });
  if (mail) deps.mailer.sendInBackground(mail);
  return { success: true as const, message: RESENT_MESSAGE };
}
