import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { safeNextPath } from '../../lib/next-path.ts';
import type { RequestInfo } from '../../lib/request.ts';
import { lockAccountPassword, passwordHashOf } from '../accounts/index.ts';
import { recordEvent } from '../activity/index.ts';
import { emitSecurityChange } from '../events/index.ts';
import { requireStepUp, type Proof } from '../mfa/index.ts';
import { confirmPassword } from '../passwords/index.ts';
import type { AuthContext } from '../sessions/index.ts';
import { identityNotice } from './identities.mails.ts';
import { labelOf, providerNamed, startUrl } from './identities.providers.ts';
import { deleteIdentity, identitiesOf, identityOfAccount } from './identities.repo.ts';
import { issueLinkTicket } from './identities.tickets.ts';

/** The providers people may sign in with, and where each sign-in starts. */
export function oauthProviders(deps: Deps) {
  const providers = deps.config.oauthProviders.map((provider) => ({ name: provider.name, label: provider.label, start_url: startUrl(deps.config, provider.name) }));
  return { success: true as const, providers };
}

/** The account's connected providers, and whether it has a password (an account made through a provider may not). */
export async function listIdentities(deps: Deps, auth: AuthContext) {
  const [rows, hash] = await Promise.all([identitiesOf(deps.db, auth.account.id), passwordHashOf(deps.db, auth.account.id)]);
  const identities = rows.map((row) => ({ provider: row.provider, label: labelOf(deps.config, row.provider), email: row.email, linked_at: row.linked_at.toISOString() }));
  return { success: true as const, identities, has_password: typeof hash === 'string' };
}

/**
 * POST /identities/{name}/link: connecting a provider is a new way into the account, so it
 * asks what a password change asks (the password, or without one a recent sign-in through a
 * provider; step-up with a second factor) and answers with a start URL carrying a link
 * ticket for this session alone. A browser's act: an API key, which no browser holds as a
 * cookie, is refused before anything is checked.
 */
export async function startLink(deps: Deps, auth: AuthContext, input: { name: string; password?: string; next?: string } & Proof, request: RequestInfo) {
  const provider = providerNamed(deps.config, input.name);
  const sessionId = auth.sessionId;
  if (sessionId === undefined) throw new AppError('FORBIDDEN', 'Connect an identity provider from a browser signed in to the account, not with an API key.');
  if (await identityOfAccount(deps.db, auth.account.id, provider.name)) throw new AppError('CONFLICT', `${provider.label} is already connected to your account.`);
  await confirmPassword(deps, auth, input.password, request);
  await requireStepUp(deps, auth, { code: input.code, response: input.response }, request);
  const ticket = await deps.db.transaction(async (tx) => {
    await recordEvent(tx, deps.clock, 'identity.link_started', { accountId: auth.account.id }, request, { provider: provider.name });
    return issueLinkTicket(tx, deps, { accountId: auth.account.id, sessionId }, provider.name);
  });
  return { success: true as const, start_url: startUrl(deps.config, provider.name, { intent: 'link', ticket, next: safeNextPath(input.next) }) };
}

const LAST_WAY_IN = 'This is the only way to sign in to your account: set a password (with a reset link) or connect another provider first.';

/**
 * Disconnects a provider. Never the last way in: an account without a password keeps at
 * least one provider. Needs the password (or, without one, a recent sign-in through a
 * provider) and, with a second factor on, its step-up.
 */
export async function unlinkIdentity(deps: Deps, auth: AuthContext, input: { name: string; password?: string } & Proof, request: RequestInfo) {
  const all = await identitiesOf(deps.db, auth.account.id);
  const linked = all.filter((row) => row.provider === input.name);
  if (!linked.length) throw new AppError('NOT_FOUND', 'This provider is not connected to your account.');
  // Said before any proof is asked for, which could not make it possible (checked again below, locked).
  if (linked.length === all.length && typeof (await passwordHashOf(deps.db, auth.account.id)) !== 'string') throw new AppError('CONFLICT', LAST_WAY_IN);
  await confirmPassword(deps, auth, input.password, request);
  await requireStepUp(deps, auth, { code: input.code, response: input.response }, request);
  await deps.db.transaction(async (tx) => {
    // With the account row locked, two unlinks at once cannot each leave the other as the last way in.
    const hasPassword = await lockAccountPassword(tx, auth.account.id);
    const others = (await identitiesOf(tx, auth.account.id)).filter((row) => row.provider !== input.name);
    if (!hasPassword && !others.length) throw new AppError('CONFLICT', LAST_WAY_IN);
    if (!(await deleteIdentity(tx, auth.account.id, input.name))) throw new AppError('NOT_FOUND', 'This provider is not connected to your account.');
    await recordEvent(tx, deps.clock, 'identity.unlinked', { accountId: auth.account.id }, request, { provider: input.name });
    await emitSecurityChange(tx, deps.clock, auth.account.id, 'identity');
  });
  const label = labelOf(deps.config, input.name);
  deps.mailer.sendInBackground(identityNotice(auth.account.email, auth.account.name, 'unlinked', label, `${deps.config.publicUrl}/account`));
  return { success: true as const };
}
