/**
 * The operator console's overview (GET /api/v1/admin/overview, admin.overview) on a database
 * of a size worth running a console for: 100,000 accounts (a tenth unconfirmed, one in twenty
 * with a second factor) and 1,000,000 activity events spread over 90 days, with admins'
 * changes and reads among them. Its target: a median under 50 ms over 20 calls.
 *
 * `npx tsx bench/admin-overview.ts [accounts] [events]` on DATABASE_URL's server (default the
 * test one); a scratch database is made, seeded in bulk with SQL (the service's own paths
 * would take an hour for a million events), vacuumed and analysed as autovacuum would leave
 * it, and dropped. The service runs in this process on it; the calls go over HTTP, one after
 * another, each recording its read as the API does.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../gateway/src/server.ts';
import { createLogger, loadConfig } from '../server/src/index.ts';
import { withBenchDatabase } from './database.ts';

const ACCOUNTS = Number(process.argv[2] ?? 100_000);
const EVENTS = Number(process.argv[3] ?? 1_000_000);
const CALLS = 20;
const WARM_UP = 3;
const TARGET_MS = 50;

type Query = (text: string, values?: unknown[]) => Promise<unknown>;

/**
 * Accounts as registrations leave them: an argon2 hash's length, a sealed key's, a name; made
 * over the last year, a tenth never confirmed, one in twenty with an authenticator.
 */
async function seedAccounts(query: Query): Promise<void> {
  await query(
    `INSERT INTO accounts (email, password_hash, name, company, plan, role, email_verified, api_key_hash, api_key_sealed, created_at, updated_at)
     SELECT 'bench-' || i || '@example.com', '$argon2id$v=19$m=19456,t=2,p=1$' || md5(i::text) || '$' || md5((i * 7)::text) || md5((i * 13)::text),
            'Bench Person ' || i, CASE WHEN i % 3 = 0 THEN 'Company ' || i END, CASE WHEN i % 8 = 0 THEN 'pro' ELSE 'free' END, 'user',
            i % 10 <> 0, sha256(convert_to('key-' || i, 'UTF8')), 'v2.k0.' || md5(i::text) || md5((i + 1)::text) || md5((i + 2)::text),
            now() - (i::float / $1) * interval '365 days', now()
     FROM generate_series(1, $1::int) AS i`,
    [ACCOUNTS],
  );
  await query(
    `INSERT INTO mfa_totp (account_id, secret_sealed, enabled_at, created_at)
     SELECT id, 'v2.k0.' || md5(id::text), now(), now() FROM accounts WHERE id % 20 = 0`,
  );
}

/**
 * Activity spread evenly over 90 days (about 11,000 events a day): sign-ins (one in five
 * failed), their second steps, sessions ending, profile and key changes, and a few thousand
 * admin lines (reads mostly, some changes). About one in ten failed sign-ins names no account.
 */
async function seedActivity(query: Query): Promise<void> {
  const batch = 250_000;
  for (let from = 1; from <= EVENTS; from += batch) {
    await query(
      `INSERT INTO audit_events (account_id, event, at, ip, user_agent, data)
       SELECT CASE WHEN kind = 1 AND i % 10 = 0 THEN NULL ELSE 1 + (i::bigint * 7919) % $3 END,
              (ARRAY['login.succeeded', 'login.failed', 'login.mfa_required', 'logout', 'profile.updated', 'api_key.rotated',
                     'admin.inbox_read', 'admin.role_changed', 'login.oauth', 'login.mfa_failed'])[kind + 1],
              now() - random() * interval '90 days',
              '10.' || (i % 250) || '.' || (i % 199) || '.' || (i % 97),
              'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
              CASE WHEN kind = 7 THEN jsonb_build_object('account', 1 + i % $3, 'role', 'admin') END
       FROM (SELECT i, CASE
                 WHEN i % 1000 = 0 THEN 6 WHEN i % 5000 = 1 THEN 7 WHEN i % 50 = 2 THEN 8 WHEN i % 100 = 3 THEN 9
                 WHEN i % 5 = 0 THEN 1 WHEN i % 7 = 0 THEN 2 WHEN i % 11 = 0 THEN 3 WHEN i % 13 = 0 THEN 4 WHEN i % 97 = 0 THEN 5
                 ELSE 0 END AS kind
             FROM generate_series($1::int, $2::int) AS i) AS rows`,
      [from, Math.min(EVENTS, from + batch - 1), ACCOUNTS],
    );
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[Math.floor(middle)];
}

async function timeOverview(url: string, token: string): Promise<number[]> {
  const call = async () => {
    const started = performance.now();
    const response = await fetch(`${url}/api/v1/admin/overview`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await response.json()) as { success?: boolean };
    if (!response.ok || !body.success) throw new Error(`the overview answered ${response.status}: ${JSON.stringify(body)}`);
    return performance.now() - started;
  };
  for (let i = 0; i < WARM_UP; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) times.push(await call());
  return times;
}

async function main(): Promise<void> {
  await withBenchDatabase(async (databaseUrl) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-overview-'));
    const config = loadConfig({
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      JWT_SECRET: randomBytes(32).toString('hex'),
      DATA_KEY: randomBytes(32).toString('hex'),
      RATE_LIMITS: 'off',
      ACCESS_LOG: 'off',
    });
    const service = await startService(config, 'all', { logger: createLogger('warn') });
    try {
      const query: Query = (text, values) => service.deps.db.query(text, values);
      const seeding = performance.now();
      await seedAccounts(query);
      await seedActivity(query);
      // Autovacuum would have done this by the time anyone looks at a console.
      await query('VACUUM ANALYZE accounts');
      await query('VACUUM ANALYZE audit_events');
      await query('VACUUM ANALYZE mfa_totp');
      console.log(`seeded ${ACCOUNTS.toLocaleString('en-US')} accounts and ${EVENTS.toLocaleString('en-US')} activity events in ${((performance.now() - seeding) / 1000).toFixed(0)} s`);

      const email = 'bench.overview.admin@example.com';
      const password = 'correct horse battery staple';
      const register = await fetch(`${service.url}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password, name: 'Bench Admin' }) });
      if (register.status !== 201) throw new Error(`register answered ${register.status}`);
      await query(`UPDATE accounts SET email_verified = true, role = 'admin' WHERE email = $1`, [email]);
      const login = await fetch(`${service.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
      const { token } = (await login.json()) as { token: string };

      const load = loadavg()[0];
      const times = await timeOverview(service.url!, token);
      console.log(`GET /api/v1/admin/overview, ${CALLS} calls one after another over HTTP, after ${WARM_UP} to warm up (load average ${load.toFixed(1)} to ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores):`);
      console.log(`  median ${median(times).toFixed(1)} ms, fastest ${Math.min(...times).toFixed(1)}, slowest ${Math.max(...times).toFixed(1)}`);
      console.log(`  target: a median under ${TARGET_MS} ms: ${median(times) < TARGET_MS ? 'met' : 'MISSED'}`);
    } finally {
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
