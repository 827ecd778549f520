import type { Deps } from '../deps.ts';
import { AppError } from '../errors/errors.ts';
import type { Queryable } from '../lib/db.ts';
import {
  accountById,
  accountRowByEmail,
  changeRole,
  emitAccountEvent,
  lockAccount as lockAccountRow,
  lockAdmins,
  searchAccountRows,
  toAccountSummary,
  verificationMailFor,
  type AccountRow,
  type LockedAccount,
} from '../modules/accounts/index.ts';
import { listActivity, recordAction } from '../modules/activity/index.ts';
import { identitiesOf } from '../modules/identities/index.ts';
import { accountsWithSecondFactor, hasSecondFactor } from '../modules/mfa/index.ts';
import { forgetCachedAccount, liveSessionsOf } from '../modules/sessions/index.ts';
import type { Actor } from '../lib/request.ts';
import type { Role, SearchAccountsInput } from './admin.schemas.ts';

// Accounts as the operator's console sees them (docs/API.md, Operator API): searched, shown
// whole, their role changed, their verification link sent again. Every read and change is
// recorded in the acting admin's activity log.

const DEFAULT_PAGE = 50;
const ACTIVITY_SHOWN = 20;
const MAX_ACCOUNT_ID = 2_147_483_647;

export const NO_SUCH_ADDRESS = 'No account has that e-mail address.';

/** Whom an account action is for: its id (the API) or its e-mail address (the CLI). */
export type AccountTarget = { id: number } | { email: string };

/** The target account, locked for the rest of the transaction; a 404 if there is none. */
export async function lockAccount(tx: Queryable, target: AccountTarget): Promise<LockedAccount> {
  const account = await lockAccountRow(tx, target);
  if (!account) throw new AppError('NOT_FOUND', 'id' in target ? 'No such account.' : NO_SUCH_ADDRESS);
  return account;
}

const shown = async (deps: Deps, row: AccountRow) => ({ ...toAccountSummary(row), mfa: await hasSecondFactor(deps.db, row.id) });

/**
 * Accounts whose address starts with `q` (normalised as addresses are, so any case finds
 * it), or whose id is `q`; every account without it. Newest first, a page at a time.
 */
export async function searchAccounts(deps: Deps, actor: Actor, input: SearchAccountsInput) {
  const limit = input.limit ?? DEFAULT_PAGE;
  const q = input.q ? input.q.normalize('NFC').toLowerCase() : undefined;
  const id = q && /^[0-9]{1,10}$/.test(q) && Number(q) <= MAX_ACCOUNT_ID ? Number(q) : undefined;
  const rows = await searchAccountRows(deps.db, q ? { emailPrefix: q, id } : {}, input.cursor ? Number(input.cursor) : undefined, limit + 1);
  const page = rows.slice(0, limit);
  const withFactor = await accountsWithSecondFactor(deps.db, page.map((row) => row.id));
  await recordAction(deps.db, deps.clock, actor, 'admin.accounts_searched', { q: q ?? null, cursor: input.cursor ?? null, found: page.length });
  const items = page.map((row) => {
    const { company: _company, ...summary } = toAccountSummary(row);
    return { ...summary, mfa: withFactor.has(row.id) };
  });
  return { success: true as const, items, next_cursor: rows.length > limit ? String(page[page.length - 1].id) : null };
}

/** The account as an administrator sees it: without its API key, with its identities, live sessions and latest activity. */
export async function accountDetails(deps: Deps, actor: Actor, target: AccountTarget) {
  const row = 'id' in target ? await accountById(deps.db, target.id) : await accountRowByEmail(deps.db, target.email);
  await recordAction(deps.db, deps.clock, actor, 'admin.account_read', { account: row?.id ?? null, ...('email' in target ? { email: target.email } : {}) });
  if (!row) throw new AppError('NOT_FOUND', 'id' in target ? 'No such account.' : NO_SUCH_ADDRESS);
  const [account, identities, sessions, activity] = await Promise.all([
    shown(deps, row),
    identitiesOf(deps.db, row.id),
    liveSessionsOf(deps, row.id),
    listActivity(deps.db, row.id, ACTIVITY_SHOWN),
  ]);
  return {
    success: true as const,
    account,
    identities: identities.map((identity) => ({ provider: identity.provider, subject: identity.subject, email: identity.email, linked_at: identity.linked_at.toISOString() })),
    sessions,
    activity: activity.items,
  };
}

/**
 * Gives the account `role`. The last admin is never made a user (409 CONFLICT): with no admin
 * left, only the CLI on the server could make one again. A demotion locks every admin first,
 * so two at once cannot each leave the other as "the other admin". A role the account has
 * already changes nothing and is not recorded.
 */
export async function setRole(deps: Deps, actor: Actor, target: AccountTarget, role: Role) {
  const { id, changed } = await deps.db.transaction(async (tx) => {
    const admins = role === 'user' ? await lockAdmins(tx) : [];
    const account = await lockAccount(tx, target);
    if (account.role === role) return { id: account.id, changed: false };
    if (role === 'user' && admins.length === 1 && admins[0] === account.id) {
      throw new AppError('CONFLICT', 'This is the last administrator: make another account an admin before making this one a user.');
    }
    await changeRole(tx, account.id, role, deps.clock.now());
    await recordAction(tx, deps.clock, actor, 'admin.role_changed', { account: account.id, role });
    await emitAccountEvent(tx, deps.clock, account.id, ['role']);
    return { id: account.id, changed: true };
  });
  // This instance at once; the others when the change's notice reaches them.
  if (changed) forgetCachedAccount(deps, id);
  return { success: true as const, account: await shown(deps, (await accountById(deps.db, id))!), changed };
}

/**
 * A new verification link for an account whose address is not confirmed, as its owner's
 * resend would send it (an address registered twice gets the mail asking to register again
 * instead). 409 CONFLICT when the address is confirmed already.
 */
export async function resendVerificationMail(deps: Deps, actor: Actor, target: AccountTarget) {
  const mail = await deps.db.transaction(async (tx) => {
    const account = await lockAccount(tx, target);
    if (account.email_verified) throw new AppError('CONFLICT', 'The address of this account is confirmed already.');
    await recordAction(tx, deps.clock, actor, 'admin.verification_resent', { account: account.id });
    return verificationMailFor(tx, deps.clock, deps.config.publicUrl, account);
  });
  deps.mailer.sendInBackground(mail);
  return { success: true as const };
}
