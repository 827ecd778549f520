import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSecretBox } from '../server/src/lib/crypto.ts';
import { createDatabase, type Db, type Queryable } from '../server/src/lib/db.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { migrate } from '../server/src/lib/migrator.ts';
import { MIGRATIONS, type MigrationContext } from '../server/src/migrations/index.ts';
import { accountCounts } from '../server/src/modules/accounts/index.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';

// account_counts (migration 0017): how many accounts there are and how many are confirmed,
// kept by a trigger on accounts in the transaction of every change, so that the operator's
// overview need not read every account. Held here against a count of the accounts
// themselves after every kind of change, at once and in a transaction that rolls back.

type Context = { databases: TestDatabase[]; dbs: Db[] };
const test = suite<Context>("account_counts: the trigger keeps the overview's counts exact");
const logger = createLogger('silent');
const dataKey = randomBytes(32);
const contextFor = (tx: Queryable): MigrationContext => ({
  sql: (text, values) => tx.query(text, values),
  secretBox: createSecretBox([dataKey]),
  dataKeys: [dataKey],
});

test.before((context) => {
  context.databases = [];
  context.dbs = [];
});
test.after(async ({ dbs, databases }) => {
  for (const db of dbs) await db.close();
  for (const database of databases) await database.drop();
});

/** A database of the test's own, not migrated. */
async function freshDatabase(context: Context): Promise<Db> {
  const database = await createTestDatabase();
  context.databases.push(database);
  const db = await createDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR, poolMax: 8, logger });
  context.dbs.push(db);
  return db;
}

const BEFORE_COUNTS = MIGRATIONS.findIndex((migration) => migration.name === '0017-admin-console');

async function insertAccounts(db: Db, count: number, verifiedEvery: number): Promise<void> {
  await db.query(
    `INSERT INTO accounts (email, password_hash, name, email_verified, api_key_hash, api_key_sealed, created_at, updated_at)
     SELECT 'counted-' || i || '-' || gen_random_uuid() || '@example.com', 'x', 'Counted', i % $2 = 0,
            sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'x', now(), now()
     FROM generate_series(1, $1::int) AS i`,
    [count, verifiedEvery],
  );
}

/** What the overview reads, and what counting the accounts says. */
async function bothCounts(db: Db) {
  const kept = await accountCounts(db, new Date(0));
  const [counted] = await db.query<{ total: number; verified: number }>(
    'SELECT count(*)::int AS total, (count(*) FILTER (WHERE email_verified))::int AS verified FROM accounts',
  );
  return { kept: { total: kept.total, verified: kept.verified }, counted, createdSince: kept.created_since };
}

test('accounts there before the migration are counted by it; every change after is counted as it commits', async (context) => {
  const db = await freshDatabase(context);
  await migrate(db, logger, MIGRATIONS.slice(0, BEFORE_COUNTS), contextFor);
  await insertAccounts(db, 37, 3);
  await migrate(db, logger, MIGRATIONS, contextFor);
  let counts = await bothCounts(db);
  assert.equal(counts.kept, { total: 37, verified: 12 });
  assert.equal(counts.kept, counts.counted);

  await insertAccounts(db, 50, 2);
  await db.query(`UPDATE accounts SET email_verified = true WHERE id IN (SELECT id FROM accounts WHERE NOT email_verified ORDER BY id LIMIT 7)`);
  // Named in the SET list without changing: nothing to count.
  await db.query(`UPDATE accounts SET email_verified = email_verified, name = 'Renamed' WHERE id % 5 = 0`);
  await db.query(`DELETE FROM accounts WHERE id IN (SELECT id FROM accounts ORDER BY id DESC LIMIT 9)`);
  counts = await bothCounts(db);
  assert.equal(counts.kept, counts.counted);
  assert.is(counts.createdSince, counts.counted.total);

  // A change that rolls back leaves the counts as they were.
  await db
    .transaction(async (tx) => {
      await tx.query(`INSERT INTO accounts (email, password_hash, name, email_verified, api_key_hash, api_key_sealed, created_at, updated_at)
                      VALUES ('rolled.back@example.com', 'x', 'Gone', true, sha256('rolled back'), 'x', now(), now())`);
      throw new Error('roll back');
    })
    .catch(() => undefined);
  assert.equal((await bothCounts(db)).kept, counts.counted);
});

test('registrations at once are each counted; a TRUNCATE, which fires no row trigger, empties the counts too', async (context) => {
  const db = await freshDatabase(context);
  await migrate(db, logger, MIGRATIONS, contextFor);
  // One account a statement, as registrations make them, eight at a time.
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let i = 0; i < 25; i++) await insertAccounts(db, 1, 1 + (i % 2));
  }));
  const counts = await bothCounts(db);
  assert.equal(counts.kept, counts.counted);

  await db.query('TRUNCATE accounts CASCADE');
  assert.equal((await bothCounts(db)).kept, { total: 0, verified: 0 });
  await insertAccounts(db, 3, 1);
  assert.equal((await bothCounts(db)).kept, { total: 3, verified: 3 });
});

test.run();
