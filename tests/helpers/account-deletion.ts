import { randomBytes } from 'node:crypto';
import { registerAndVerify } from './auth.ts';
import type { TestService } from './service.ts';
import { callerFor } from './webhook-fixtures.ts';

// What an account owns, table by table, for the suites of its deletion (tests/auth.account-delete.*):
// what a deletion must remove, and what a refused one must leave.

export const SITE_SECRET = `whsec_${randomBytes(24).toString('base64url')}`;
export const VIBER_TOKEN = `4453b6ac1${randomBytes(6).toString('hex')}-e02c5f12174805f9-daec9cbb5448c51f`;

/** How many rows `sql` (a FROM clause) has. */
export const count = async (service: TestService, sql: string, params: unknown[]): Promise<number> =>
  (await service.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0].n;

/** Every row the account owns, table by table (payments and messages through the sites and channels saved before). */
export async function owned(service: TestService, accountId: number, siteIds: number[] = [], channelIds: string[] = []) {
  return {
    accounts: await count(service, 'accounts WHERE id = $1', [accountId]),
    sessions: await count(service, 'sessions WHERE account_id = $1', [accountId]),
    email_tokens: await count(service, 'email_tokens WHERE account_id = $1', [accountId]),
    sites: await count(service, 'sites WHERE account_id = $1', [accountId]),
    payments: await count(service, 'payments WHERE site_id = ANY($1::int[])', [siteIds]),
    channels: await count(service, 'channels WHERE account_id = $1', [accountId]),
    channel_messages: await count(service, 'channel_messages WHERE channel_id = ANY($1::uuid[])', [channelIds]),
    operator_link_codes: await count(service, 'operator_link_codes WHERE account_id = $1', [accountId]),
    operator_chats: await count(service, 'operator_chats WHERE account_id = $1', [accountId]),
  };
}

/** What `owned` says of an account that is gone. */
export const NOTHING_LEFT = {
  accounts: 0,
  sessions: 0,
  email_tokens: 0,
  sites: 0,
  payments: 0,
  channels: 0,
  channel_messages: 0,
  operator_link_codes: 0,
  operator_chats: 0,
};

/** The audit rows of `event` about the account: its own, or naming it in their data once it is gone. */
export const auditRows = (service: TestService, event: string, accountId: number) =>
  service.deps.db.query<{ account_id: number | null; event: string; ip: string | null; data: Record<string, unknown> | null }>(
    `SELECT account_id, event, ip, data FROM audit_events WHERE event = $1 AND (account_id = $2 OR (data->>'account_id')::int = $2) ORDER BY id`,
    [event, accountId],
  );

/** An account with a site and a channel, for a test of a refusal: what it owns must stay. */
export async function accountWithSite(service: TestService, email: string) {
  const account = await registerAndVerify(service, email);
  const caller = callerFor(service, { id: account.user.id, email: account.email, token: account.token });
  const { siteKey } = await caller.sites.create({ name: 'Kept', paymentWebhookSecret: SITE_SECRET });
  const { channelId } = await caller.channels.create({ platform: 'messengertwo', name: 'Kept chat', botToken: VIBER_TOKEN });
  const siteIds = (await service.deps.db.query<{ id: number }>('SELECT id FROM sites WHERE site_key = $1', [siteKey])).map((row) => row.id);
  return { account, siteIds, channelIds: [channelId] };
}
