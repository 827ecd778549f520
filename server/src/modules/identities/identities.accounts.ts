import type { OAuthProviderConfig } from '../../config.oauth.ts';
import type { Deps } from '../../deps.ts';
import { randomHex } from '../../lib/crypto.ts';
import type { Mail } from '../../lib/mailer.ts';
import { emailSchema } from '../../lib/validation.ts';
import type { RequestInfo } from '../../lib/request.ts';
import { accountById, apiKeyPlace, claimUnverifiedAccount, createProviderAccount, emitAccountEvent, lockAccountRowByEmail, type AccountRow } from '../accounts/index.ts';
import { recordEvent } from '../activity/index.ts';
import { apiKeyHash } from '../keys/index.ts';
import { hasSecondFactor } from '../mfa/index.ts';
import { forgetCachedAccount, revokeSessions } from '../sessions/index.ts';
import type { ProviderPerson } from './identities.profile.ts';
import { linkIdentity, type IdentityToLink } from './identities.link.ts';
import { identityBySubject, identityOfAccount } from './identities.repo.ts';

/** Why a callback did not sign anyone in: what /login is told (docs/API.md, Identity providers). */
export type Refusal = 'EMAIL_NOT_VERIFIED' | 'CONFLICT' | 'IDENTITY_TAKEN' | 'PROVIDER_IN_USE' | 'UNAUTHORIZED';

/**
 * The account a callback signs in to (and whether it only linked the provider, or links it
 * only once the account's second step passes), or why none.
 */
export type Choice = { account: AccountRow; linkedOnly?: true; pendingLink?: IdentityToLink } | { refused: Refusal; email?: string };

type Context = { deps: Deps; provider: OAuthProviderConfig; person: ProviderPerson; request: RequestInfo };

/** The callback's person, as linkIdentity takes it. */
const identityOf = ({ provider, person }: Context): IdentityToLink => ({ provider: provider.name, subject: person.subject, email: person.email ?? null });

/** (2) intent=link by a signed-in account: linked whatever the provider's address; a person linked elsewhere is a conflict. */
export async function linkToSignedIn(context: Context, accountId: number): Promise<Choice> {
  const { deps } = context;
  const account = await accountById(deps.db, accountId);
  if (!account) return { refused: 'UNAUTHORIZED' };
  const existing = await identityBySubject(deps.db, context.provider.name, context.person.subject);
  if (existing) return existing.account_id === accountId ? { account, linkedOnly: true } : { refused: 'IDENTITY_TAKEN' };
  const linked = await deps.db.transaction((tx) => linkIdentity(tx, deps, account, identityOf(context), context.request));
  if ('refused' in linked) return linked;
  deps.mailer.sendInBackground(linked.notice);
  return { account, linkedOnly: true };
}

/** The provider's address as this service keeps addresses, if it is one it accepts. */
export function addressOf(person: ProviderPerson): string | undefined {
  const parsed = emailSchema.safeParse(person.email ?? '');
  return parsed.success ? parsed.data : undefined;
}

/**
 * A sign-in (docs/API.md, Identity providers, "Which account"): (1) the person is linked:
 * that account; (3) no verified address: refused; (4) nobody has the address: a new
 * account; (5) an account has it and the provider is trusted for e-mail: linked to it, and
 * a registration never confirmed loses its password and sessions; (6) not trusted: refused.
 */
export async function accountForSignIn(context: Context): Promise<Choice> {
  const { deps, provider, person, request } = context;
  const linked = await identityBySubject(deps.db, provider.name, person.subject);
  if (linked) {
    const account = await accountById(deps.db, linked.account_id);
    if (account) return { account };
  }
  const email = addressOf(person);
  if (!person.emailVerified || !email) return { refused: 'EMAIL_NOT_VERIFIED' };
  const apiKey = randomHex(32);
  const outcome = await deps.db.transaction(async (tx): Promise<{ choice: Choice; notice?: Mail }> => {
    const created = await createProviderAccount(tx, deps.clock.now(), { email, name: person.name ?? email.split('@')[0] }, {
      hash: apiKeyHash(deps, apiKey),
      sealFor: (id) => deps.secretBox.seal(apiKey, apiKeyPlace(id)),
    });
    if (created) {
      await recordEvent(tx, deps.clock, 'account.registered', { accountId: created.id }, request, { provider: provider.name });
      await linkIdentity(tx, deps, created, identityOf(context), request, true);
      // Made with an address the provider verified: it exists for the platform from now.
      await emitAccountEvent(tx, deps.clock, created.id);
      return { choice: { account: created } };
    }
    const existing = await lockAccountRowByEmail(tx, email);
    if (!existing || !provider.trustEmail) return { choice: { refused: 'CONFLICT', email } };
    // Linked to another person of this provider: the address alone does not make this one it.
    if (await identityOfAccount(tx, existing.id, provider.name)) return { choice: { refused: 'PROVIDER_IN_USE', email } };
    if (!existing.email_verified) {
      // Whoever registered the address before cannot sign in with the password they chose.
      await claimUnverifiedAccount(tx, deps.clock, existing.id);
      await revokeSessions(tx, deps.clock, existing.id);
      await recordEvent(tx, deps.clock, 'email.verified', { accountId: existing.id }, request, { provider: provider.name });
      await emitAccountEvent(tx, deps.clock, existing.id);
    }
    // With a second factor, the link waits for the second step (identities.link.ts).
    if (existing.email_verified && (await hasSecondFactor(tx, existing.id))) return { choice: { account: existing, pendingLink: identityOf(context) } };
    const linked = await linkIdentity(tx, deps, existing, identityOf(context), request);
    return { choice: { account: { ...existing, email_verified: true } }, notice: 'notice' in linked ? linked.notice : undefined };
  });
  if (outcome.notice) deps.mailer.sendInBackground(outcome.notice);
  if ('account' in outcome.choice) forgetCachedAccount(deps, outcome.choice.account.id);
  return outcome.choice;
}
