import type { Clock } from '../../lib/clock.ts';
import type { Queryable } from '../../lib/db.ts';
import { emitEvent, type AccountField } from '../events/index.ts';
import { toAccountSummary } from './accounts.user.ts';
import { accountById } from './accounts.repo.ts';

/**
 * `account.created` (no `changed`: the address was just verified) or `account.updated` with
 * the fields that changed, in the caller's transaction, showing the account as it stands in
 * it: after the change, without its API key.
 */
export async function emitAccountEvent(tx: Queryable, clock: Clock, accountId: number, changed?: AccountField[]): Promise<void> {
  const row = await accountById(tx, accountId);
  if (!row) return;
  const account = toAccountSummary(row);
  await emitEvent(tx, clock, changed ? { type: 'account.updated', data: { account, changed } } : { type: 'account.created', data: { account } });
}
