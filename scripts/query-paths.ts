// The paths a raw statement can take through Sequelize's pool, timed on a join of a session
// and its account (a statement of the request path's size): what
// server/src/lib/sequelize.internals.ts cites. `npx tsx scripts/query-paths.ts` on DATABASE_URL (a scratch database is made and
// dropped); 7 rounds of 3,000 statements each, 4 at a time, medians in µs per statement.
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { QueryTypes, Sequelize } from 'sequelize';
import { createSecretBox } from '../server/src/lib/crypto.ts';
import { createDatabase } from '../server/src/lib/db.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { migrate } from '../server/src/lib/migrator.ts';
import { MIGRATIONS } from '../server/src/migrations/index.ts';
import { ACCOUNT_COLUMNS } from '../server/src/modules/accounts/accounts.model.ts';
import { createTestDatabase } from '../tests/helpers/database.ts';
import { connectionOf, poolOf } from '../server/src/lib/sequelize.internals.ts';

process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const t = await createTestDatabase();
const logger = createLogger('silent');
const db = await createDatabase({ databaseUrl: t.env.DATABASE_URL, dataDir: t.env.DATA_DIR, logger, poolMax: 4 });
const key = randomBytes(32);
await migrate(db, logger, MIGRATIONS, (tx) => ({ sql: (text, values) => tx.query(text, values), secretBox: createSecretBox([key]), dataKeys: [key] }));
await db.query(`INSERT INTO accounts (id, email, password_hash, name, api_key_hash, api_key_sealed) VALUES (1, 'a@example.com', 'x', 'A', '\\x01', 's')`);
const sid = randomUUID();
const now = new Date();
await db.query('INSERT INTO sessions (id, account_id, created_at, auth_time, expires_at) VALUES ($1, 1, $2, $2, $3)', [sid, now, new Date(now.getTime() + 3600e3)]);
const text = `SELECT ${ACCOUNT_COLUMNS}, s.expires_at AS session_expires_at, coalesce(s.last_used_at, s.created_at) AS session_last_used_at
         FROM sessions s JOIN accounts a ON a.id = s.account_id
         WHERE s.id = $1 AND s.account_id = $2 AND s.revoked_at IS NULL AND s.expires_at > $3`;
const values = () => [sid, 1, new Date()];
const sequelize = new Sequelize(t.env.DATABASE_URL!, { dialect: 'postgres', dialectModule: pg, logging: false, pool: { max: 4, min: 0 } });
const pool = poolOf(sequelize);

async function onPooledClient(query: { name?: string; text: string }) {
  const client = await pool.acquire();
  try {
    return (await client.query({ ...query, values: values() })).rows;
  } finally {
    pool.release(client);
  }
}

const paths: Record<string, () => Promise<unknown>> = {
  'prepared, raw pg on a pooled client (db.ts)': () => onPooledClient({ name: 'auth_by_session', text }),
  'unnamed, raw pg on a pooled client': () => onPooledClient({ text }),
  'sequelize.query (public API, bind)': () => sequelize.query(text, { bind: values(), type: QueryTypes.SELECT }),
  'tx: raw pg on the transaction connection': () => sequelize.transaction(async (tr) => (await connectionOf(tr).query({ text, values: values() })).rows),
  'tx: sequelize.query with { transaction }': () => sequelize.transaction((tr) => sequelize.query(text, { bind: values(), type: QueryTypes.SELECT, transaction: tr })),
};

async function round(run: () => Promise<unknown>, n: number, concurrency: number): Promise<number> {
  let left = n;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (left-- > 0) await run();
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return Number(process.hrtime.bigint() - started) / 1e3 / n;
}
for (const run of Object.values(paths)) await round(run, 2000, 4);
const results: Record<string, number[]> = {};
for (let r = 0; r < 7; r++) for (const [name, run] of Object.entries(paths)) (results[name] ??= []).push(await round(run, 3000, 4));
for (const [name, rounds] of Object.entries(results)) {
  const sorted = [...rounds].sort((a, b) => a - b);
  console.log(`${name}: median ${sorted[3].toFixed(1)} µs/query (rounds ${sorted.map((x) => x.toFixed(0)).join(' ')})`);
}
await sequelize.close();
await db.close();
await t.drop();
