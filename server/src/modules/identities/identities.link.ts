import type { Deps } from '../../deps.ts';
import type { Queryable } from '../../lib/db.ts';
import type { Mail } from '../../lib/mailer.ts';
import type { RequestInfo } from '../../lib/request.ts';
import { recordEvent } from '../activity/index.ts';
import { emitSecurityChange } from '../events/index.ts';
import { identityNotice } from './identities.mails.ts';
import { labelOf } from './identities.providers.ts';
import { identityOfAccount, insertIdentity } from './identities.repo.ts';

/** A provider's person as an account is linked to it: the provider, its id for them, the address it gave. */
export type IdentityToLink = { provider: string; subject: string; email: string | null };

type LinkDeps = Pick<Deps, 'clock' | 'config'>;

/**
 * The link and what it is recorded as, in the caller's transaction: the notice to mail once it
 * commits, or why there is no link. `PROVIDER_IN_USE`: the account is linked to another
 * person of the same provider (one of each: unlinking names the provider alone, docs/API.md).
 * `IDENTITY_TAKEN`: that person is linked already, to this account or another.
 * Linking to an account that existed before is a security change it is told of; a new
 * account's first link is part of its creation.
 */
export async function linkIdentity(
  tx: Queryable,
  deps: LinkDeps,
  account: { id: number; email: string; name: string },
  identity: IdentityToLink,
  request: RequestInfo,
  fresh = false,
): Promise<{ notice: Mail } | { refused: 'PROVIDER_IN_USE' | 'IDENTITY_TAKEN' }> {
  if (await identityOfAccount(tx, account.id, identity.provider)) return { refused: 'PROVIDER_IN_USE' };
  if (!(await insertIdentity(tx, deps.clock, account.id, identity))) return { refused: 'IDENTITY_TAKEN' };
  await recordEvent(tx, deps.clock, 'identity.linked', { accountId: account.id }, request, { provider: identity.provider });
  if (!fresh) await emitSecurityChange(tx, deps.clock, account.id, 'identity');
  return { notice: identityNotice(account.email, account.name, 'linked', labelOf(deps.config, identity.provider), `${deps.config.publicUrl}/account`) };
}

/**
 * A sign-in through a provider that joined an account with a second factor (identities.accounts.ts,
 * rule 5) links the provider here, once its second step has passed: never before, so a
 * sign-in abandoned at the second step changes nothing. A person linked meanwhile to another
 * account is left there.
 */
export async function linkAfterSecondStep(deps: Pick<Deps, 'clock' | 'config' | 'db' | 'mailer'>, account: { id: number; email: string; name: string }, identity: IdentityToLink, request: RequestInfo): Promise<void> {
  const linked = await deps.db.transaction((tx) => linkIdentity(tx, deps, account, identity, request));
  if ('notice' in linked) deps.mailer.sendInBackground(linked.notice);
}
