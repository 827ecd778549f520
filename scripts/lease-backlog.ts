// What the event sender's lease statement (events.repo.ts, leaseDue) costs while a receiver
// is down: each account's first delivery failed and waits for its retry, and every later
// one waits behind it. Nothing is due to be sent, yet the statement reads every waiting
// delivery to find that out, at every lease (five a second while the sender is idle).
// `npx tsx scripts/lease-backlog.ts [deliveries] [accounts]` on DATABASE_URL (a scratch
// database is made and dropped); defaults 20,000 and 10; medians of 7 leases, in ms.
import { randomBytes, randomUUID } from 'node:crypto';
import { createSecretBox } from '../server/src/lib/crypto.ts';
import { createDatabase } from '../server/src/lib/db.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { migrate } from '../server/src/migrations/index.ts';
import { leaseDue } from '../server/src/modules/events/events.repo.ts';
import { createTestDatabase } from '../tests/helpers/database.ts';

const deliveries = Number(process.argv[2] ?? 20_000);
const accounts = Number(process.argv[3] ?? 10);
process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const scratch = await createTestDatabase();
const logger = createLogger('silent');
const db = await createDatabase({ databaseUrl: scratch.env.DATABASE_URL, dataDir: scratch.env.DATA_DIR, logger });
try {
  const key = randomBytes(32);
  await migrate(db, logger, { secretBox: createSecretBox([key]), dataKeys: [key] });
  const endpoint = randomUUID();
  await db.query(`INSERT INTO event_endpoints (id, url, secret_sealed, created_at, updated_at) VALUES ($1, 'http://127.0.0.1:9/down', 'unused', now(), now())`, [endpoint]);
  await db.query(
    `INSERT INTO events (id, type, account_id, body, created_at) SELECT 'msg_' || i, 'payment.updated', i % $2, '{}', now() FROM generate_series(1, $1::int) AS i`,
    [deliveries, accounts],
  );
  await db.query(
    `INSERT INTO event_deliveries (id, endpoint_id, event_id, account_id, type, state, next_attempt_at, created_at)
     SELECT gen_random_uuid(), $3, 'msg_' || i, i % $2, 'payment.updated', 'pending',
            CASE WHEN i <= $2 THEN now() + interval '5 minutes' ELSE now() END, now()
     FROM generate_series(1, $1::int) AS i`,
    [deliveries, accounts, endpoint],
  );
  await db.query('ANALYZE event_deliveries');
  const times: number[] = [];
  for (let round = 0; round < 7; round++) {
    const started = performance.now();
    const leased = await leaseDue(db, new Date(), new Date(Date.now() + 18_000), 512, 128, { ids: [], free: [] });
    times.push(performance.now() - started);
    if (leased.length) throw new Error(`leased ${leased.length}: the receiver's deliveries should all be waiting`);
  }
  times.sort((a, b) => a - b);
  console.log(`${deliveries.toLocaleString('en-US')} deliveries waiting over ${accounts} accounts: a lease that finds nothing takes ${times[3].toFixed(1)} ms (median of 7)`);
} finally {
  await db.close();
  await scratch.drop();
}
