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
