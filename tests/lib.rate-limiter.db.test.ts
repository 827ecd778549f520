import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { TestClock } from '../server/src/lib/clock.ts';
import { createSecretBox } from '../server/src/lib/crypto.ts';
import { createDatabase, type Db } from '../server/src/lib/db.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { createRateLimiter, type RateDecision, type RateLimiter, type RateRule } from '../server/src/lib/rate-limiter.ts';
import { migrate } from '../server/src/migrations/index.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';

// The rate limiter on its own: fixed windows counted in the `rate_limits` table (hence a real
// database, migrated, and no service), on a test clock. Every test counts under keys of its
// own, so no test sees another's hits.

type Context = { database: TestDatabase; db: Db };
const test = suite<Context>('lib/rate-limiter: fixed windows in PostgreSQL');
const logger = createLogger('silent');

test.before(async (context) => {
  context.database = await createTestDatabase();
  const { DATABASE_URL, DATA_DIR } = context.database.env;
  context.db = await createDatabase({ databaseUrl: DATABASE_URL, dataDir: DATA_DIR, poolMax: 8, logger });
  const dataKey = randomBytes(32);
  await migrate(context.db, logger, { secretBox: createSecretBox([dataKey]), dataKeys: [dataKey] });
});
test.after(async (context) => {
  await context.db?.close();
  await context.database?.drop();
});

const START = new Date('2030-01-01T12:00:00.000Z');
let keys = 0;
/** A key no other test counts under. */
const freshKey = (label: string) => `${label}-${++keys}`;
const rule = (name: string, limit: number, windowSeconds: number): RateRule => ({ name, limit, windowSeconds });

function limiterOn(db: Db, clock = new TestClock(START), onRefusal?: (rule: string) => void) {
  return { clock, limiter: createRateLimiter({ db, clock, enabled: true, onRefusal }) };
}

async function hits(limiter: RateLimiter, checks: Parameters<RateLimiter['hit']>[0], times: number): Promise<RateDecision[]> {
  const decisions: RateDecision[] = [];
  for (let i = 0; i < times; i++) decisions.push(await limiter.hit(checks));
  return decisions;
}

const allowed = (decisions: RateDecision[]) => decisions.map((decision) => decision.allowed);

async function storedHits(db: Db, storageKey: string): Promise<number | undefined> {
  const [row] = await db.query<{ hits: number }>('SELECT hits FROM rate_limits WHERE key = $1', [storageKey]);
  return row?.hits;
}

test('up to the limit a window allows; past it, it refuses, naming the rule and the seconds left in the window', async ({ db }) => {
  const { clock, limiter } = limiterOn(db);
  const check = { rule: rule('login', 3, 60), key: freshKey('ip') };
  assert.equal(allowed(await hits(limiter, [check], 3)), [true, true, true]);
  clock.advance(20_500);
  const refused = await limiter.hit([check]);
  assert.is(refused.allowed, false);
  if (refused.allowed) return;
  assert.is(refused.rule, 'login');
  assert.is(refused.retryAfterSeconds, 40, '39.5 s left, rounded up');
  assert.is(await storedHits(db, `login:${check.key}`), 4, 'the refused hit counts too');
});

test('when the window ends the count starts again from one', async ({ db }) => {
  const { clock, limiter } = limiterOn(db);
  const check = { rule: rule('register', 2, 60), key: freshKey('ip') };
  assert.equal(allowed(await hits(limiter, [check], 3)), [true, true, false]);
  clock.advance(59_999);
  assert.is((await limiter.hit([check])).allowed, false, 'a millisecond before the end it still refuses');
  clock.advance(1);
  assert.is((await limiter.hit([check])).allowed, true);
  assert.is(await storedHits(db, `register:${check.key}`), 1);
  assert.equal(allowed(await hits(limiter, [check], 2)), [true, false]);
});

test('a refusal is told to onRefusal only when the caller reports it', async ({ db }) => {
  const told: string[] = [];
  const { limiter } = limiterOn(db, new TestClock(START), (name) => told.push(name));
  const check = { rule: rule('forgot', 1, 60), key: freshKey('account') };
  const [, refused] = await hits(limiter, [check], 2);
  assert.equal(told, [], 'a probe that carries on says nothing');
  assert.is(refused.allowed, false);
  if (!refused.allowed) refused.report();
  assert.equal(told, ['forgot']);
});

test('several checks at once: each key is counted, and the refusal with the longest wait is the answer', async ({ db }) => {
  const { clock, limiter } = limiterOn(db);
  const perIp = { rule: rule('per-ip', 1, 60), key: freshKey('ip') };
  const perAccount = { rule: rule('per-account', 1, 3600), key: freshKey('account') };
  const roomy = { rule: rule('roomy', 100, 60), key: freshKey('ip') };
  assert.is((await limiter.hit([perIp, perAccount, roomy])).allowed, true);
  clock.advance(10_000);
  const both = await limiter.hit([perIp, perAccount, roomy]);
  assert.equal(both.allowed ? undefined : [both.rule, both.retryAfterSeconds], ['per-account', 3590]);
  const ipOnly = await limiter.hit([perIp, roomy]);
  assert.equal(ipOnly.allowed ? undefined : [ipOnly.rule, ipOnly.retryAfterSeconds], ['per-ip', 50]);
  assert.is(await storedHits(db, `roomy:${roomy.key}`), 3, 'a check that passes is counted even when another refuses');
});

test('keys and rules count apart: the same key under another rule, or another key, starts at zero', async ({ db }) => {
  const { limiter } = limiterOn(db);
  const key = freshKey('ip');
  const login = rule('login', 1, 60);
  assert.equal(allowed(await hits(limiter, [{ rule: login, key }], 2)), [true, false]);
  assert.is((await limiter.hit([{ rule: rule('register', 1, 60), key }])).allowed, true);
  assert.is((await limiter.hit([{ rule: login, key: freshKey('ip') }])).allowed, true);
});

test('refund takes back one hit; a window that only the refunded hit opened is forgotten', async ({ db }) => {
  const { clock, limiter } = limiterOn(db);
  const check = { rule: rule('login-failures', 2, 60), key: freshKey('account') };
  await hits(limiter, [check], 2);
  await limiter.refund(check);
  assert.is(await storedHits(db, `login-failures:${check.key}`), 1);
  assert.equal(allowed(await hits(limiter, [check], 2)), [true, false], 'the refunded hit left room for one more');

  const lone = { rule: rule('login-failures', 2, 60), key: freshKey('account') };
  await limiter.hit([lone]);
  await limiter.refund(lone);
  assert.is(await storedHits(db, `login-failures:${lone.key}`), undefined, 'no row is left to date the success');

  // A refund after the window ended does not reach into the next one.
  const late = { rule: rule('login-failures', 5, 60), key: freshKey('account') };
  await hits(limiter, [late], 3);
  clock.advance(60_000);
  await limiter.refund(late);
  assert.is(await storedHits(db, `login-failures:${late.key}`), 3);
});

test('clear forgets the count at once', async ({ db }) => {
  const { limiter } = limiterOn(db);
  const check = { rule: rule('login-failures', 1, 3600), key: freshKey('account') };
  assert.equal(allowed(await hits(limiter, [check], 2)), [true, false]);
  await limiter.clear(check);
  assert.is(await storedHits(db, `login-failures:${check.key}`), undefined);
  assert.is((await limiter.hit([check])).allowed, true);
});

test('concurrent hits cannot all slip under the limit: 20 at once with a limit of 5 get exactly 5 allowed', async ({ db }) => {
  const { limiter } = limiterOn(db);
  const check = { rule: rule('burst', 5, 60), key: freshKey('ip') };
  const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter.hit([check])));
  assert.is(decisions.filter((decision) => decision.allowed).length, 5);
  assert.is(await storedHits(db, `burst:${check.key}`), 20);
});

test('disabled (RATE_LIMITS=off), it allows everything and counts nothing', async ({ db }) => {
  const clock = new TestClock(START);
  const limiter = createRateLimiter({ db, clock, enabled: false });
  const check = { rule: rule('off', 1, 60), key: freshKey('ip') };
  assert.equal(allowed(await hits(limiter, [check], 3)), [true, true, true]);
  await limiter.refund(check);
  assert.is(await storedHits(db, `off:${check.key}`), undefined);
});

test.run();
