import { createCaller, createContextInner, type Deps } from '../server/src/index.ts';
import { randomBytes } from 'node:crypto';
import type { SeededAccount, SeededSite } from './protocol.ts';

async function post(url: string, body: unknown): Promise<any> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await response.json();
  if (!response.ok) throw new Error(`seed: POST ${url} answered ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * A verified account made through the service's own routes; only the e-mail confirmation is
 * skipped (by SQL), since the bench has no inbox.
 */
export async function seedAccount(deps: Deps, url: string): Promise<SeededAccount> {
  const email = `bench-${Date.now()}-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'seeded load-test password';
  await post(`${url}/api/v1/auth/register`, { email, password, name: 'Bench' });
  await deps.db.query('UPDATE accounts SET email_verified = true WHERE email = $1', [email]);
  const login = await post(`${url}/api/v1/auth/login`, { email, password });
  return { email, password, apiKey: login.user.api_key, token: login.token };
}

/** A site made through the `sites.create` procedure, as a frontend would. */
export async function seedSite(deps: Deps, account: SeededAccount): Promise<SeededSite> {
  const webhookSecret = `whsec_${randomBytes(24).toString('base64url')}`;
  const caller = createCaller(createContextInner(deps, { bearer: account.token }));
  const { siteKey } = await caller.sites.create({ name: 'Bench shop', paymentWebhookSecret: webhookSecret });
  return { siteKey, webhookSecret };
}

/**
 * What an endpoint whose receiver has been down a while has waiting, written in bulk in one
 * transaction: `count` deliveries over `accounts` accounts, each account's first one failed
 * once and due again in five minutes, every later one behind it. Events of `account.deleted`,
 * a type no other scenario writes.
 */
export async function seedDownBacklog(db: Pick<Deps['db'], 'transaction'>, endpointId: string, count: number, accounts: number): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO events (id, type, account_id, body, created_at)
       SELECT 'msg_down_' || $3 || '_' || i, 'account.deleted', 2000000 + i % $2, '{}', now() FROM generate_series(1, $1::int) AS i`,
      [count, accounts, endpointId],
    );
    await tx.query(
      `INSERT INTO event_deliveries (id, endpoint_id, event_id, account_id, type, state, attempts, step, next_attempt_at, created_at)
       SELECT gen_random_uuid(), $3::uuid, 'msg_down_' || $4 || '_' || i, 2000000 + i % $2, 'account.deleted', 'pending',
              CASE WHEN i <= $2 THEN 1 ELSE 0 END, CASE WHEN i <= $2 THEN 1 ELSE 0 END,
              CASE WHEN i <= $2 THEN now() + interval '5 minutes' ELSE now() END, now()
       FROM generate_series(1, $1::int) AS i ORDER BY i`,
      [count, accounts, endpointId, endpointId],
    );
  });
}
