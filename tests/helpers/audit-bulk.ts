import { recordEvent } from '../../server/src/modules/activity/index.ts';
import type { Account } from './auth.ts';
import type { TestService } from './service.ts';

// The activity log of a busy account, for the suites of the audit export (tests/admin.audit.*):
// more events than a page holds, dated a second apart far from anything else in the log.

/** Events the busy account has: two and a half pages of 1000. */
export const BULK = 2_500;
const T0 = Date.parse('2024-01-01T00:00:00Z');

/** When the busy account's `second`-th event happened. */
export const at = (second: number) => new Date(T0 + second * 1000).toISOString();

/** Writes BULK events of `account`, numbered in `data.n` in the order they are written. */
export async function recordBulk(service: TestService, account: Account): Promise<void> {
  const request = { ip: '198.51.100.9', requestId: 'bulk', userAgent: 'bulk-writer' };
  await service.deps.db.transaction(async (tx) => {
    for (let n = 0; n < BULK; n += 1) {
      await recordEvent(tx, { now: () => new Date(at(n)) }, 'login.succeeded', { accountId: account.user.id }, request, { n });
    }
  });
}
