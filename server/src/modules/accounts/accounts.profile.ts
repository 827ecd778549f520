import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { recordEvent } from '../activity/index.ts';
import { emitEvent } from '../events/index.ts';
import type { AuthContext } from '../sessions/index.ts';
// Apart from accounts.user.ts, which the face exports to sessions/: this file names Deps.
import { toAccountSummary, toUser, type User } from './accounts.user.ts';
import { lockAccountRow, setProfile } from './accounts.repo.ts';
import type { UpdateProfileInput } from './accounts.schemas.ts';
import { forgetCachedAccount } from '../sessions/index.ts';

const PROFILE_FIELDS = ['name', 'company'] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];

/**
 * Sets the fields given (`company: null` clears it). Only a field whose value really moves
 * counts as changed: sending the name the account already has writes nothing and records
 * nothing. The row is locked first, so two changes at once each compare with what the other
 * left, and the activity line commits with the change it records.
 */
export async function updateProfile(deps: Deps, auth: AuthContext, input: UpdateProfileInput, request: RequestInfo): Promise<{ user: User; changed: ProfileField[] }> {
  const { account, changed } = await deps.db.transaction(async (tx) => {
    const current = await lockAccountRow(tx, auth.account.id);
    // Deleted since its credential was checked: the credential no longer names anyone.
    if (!current) throw new AppError('UNAUTHORIZED');
    const wanted = { name: input.name ?? current.name, company: input.company === undefined ? current.company : input.company };
    const moved = PROFILE_FIELDS.filter((field) => wanted[field] !== current[field]);
    if (!moved.length) return { account: current, changed: moved };
    const updated = await setProfile(tx, current.id, wanted, deps.clock.now());
    await recordEvent(tx, deps.clock, 'profile.updated', { accountId: current.id }, request, { changed: moved });
    await emitEvent(tx, deps.clock, { type: 'account.updated', data: { account: toAccountSummary(updated), changed: moved } });
    return { account: updated, changed: moved };
  });
  // Every instance hears of the change on commit (migration 0003); this one must not wait for
  // that notice, or the caller's next /me could still read the old name from its cache.
  if (changed.length) forgetCachedAccount(deps, account.id);
  return { user: toUser(account, auth.apiKey), changed };
}
