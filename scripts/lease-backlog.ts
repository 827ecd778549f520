// What the event sender's lease statement (events.repo.ts, leaseDue) costs while a receiver
// is down: each account's first delivery failed and waits for its retry, and every later
// one waits behind it. The first leases find the waiting ones and set them aside (a lease
// reads LEASE_SCAN deliveries per endpoint at most, and the sender leases again at once
// while it sets some aside); after that, a lease that finds nothing to send should cost
// next to nothing however long the backlog. Before, every lease read the whole backlog
// (224 ms at 20,000 over 10 accounts, 672 ms at 100,000 over 100, five times a second).
// `npx tsx scripts/lease-backlog.ts [deliveries] [accounts]` on DATABASE_URL (a scratch
// database is made and dropped); defaults 20,000 and 10.
import { randomBytes, randomUUID } from 'node:crypto';
import { createSecretBox } from '../server/src/lib/crypto.ts';
import { createDatabase } from '../server/src/lib/db.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { migrate } from '../server/src/migrations/index.ts';
import { leaseDue } from '../server/src/modules/events/events.repo.ts';
import { createTestDatabase } from '../tests/helpers/database.ts';
import { seedDownBacklog } from '../bench/seed.ts';

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
  await seedDownBacklog(db, endpoint, deliveries, accounts);
  await db.query('ANALYZE event_deliveries');
  const lease = async () => {
    const started = performance.now();
    const leased = await leaseDue(db, new Date(), new Date(Date.now() + 18_000), 512, 128, { ids: [], free: [] });
    if (leased.due.length) throw new Error(`leased ${leased.due.length}: the receiver's deliveries should all be waiting`);
    return { ms: performance.now() - started, held: leased.held };
  };
  let setAside = 0;
  let leases = 0;
  for (let held = Infinity; held > 0; leases++) {
    const round = await lease();
    setAside += round.ms;
    held = round.held;
  }
  const times: number[] = [];
  for (let round = 0; round < 7; round++) times.push((await lease()).ms);
  times.sort((a, b) => a - b);
  console.log(`${deliveries.toLocaleString('en-US')} deliveries waiting over ${accounts} accounts:`);
  console.log(`  ${leases} leases (${setAside.toFixed(0)} ms in all) set them aside; then a lease that finds nothing takes ${times[3].toFixed(1)} ms (median of 7)`);
} finally {
  await db.close();
  await scratch.drop();
}
