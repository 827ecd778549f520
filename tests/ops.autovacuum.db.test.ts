import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { autovacuumState, CHURNING_TABLES } from '../server/src/lib/autovacuum-check.ts';
import { startTestApp, type TestService } from './helpers/service.ts';

// Every service process warns at start when PostgreSQL will not vacuum the tables that churn
// (docs/DEPLOY.md, Sizing): without it they grow and their statistics go stale. A database
// server only: the embedded database is for development, and is not checked.

type Context = { service: TestService };
const test = suite<Context>('start: a warning when PostgreSQL will not vacuum the tables that churn');

test.after(async ({ service }) => {
  await service?.close();
});

type LogLine = { level: string; msg: string; tables?: string[] };

const autovacuumWarnings = (service: TestService) =>
  service.logs.lines.map((line) => JSON.parse(line) as LogLine).filter((line) => line.level === 'warn' && /autovacuum/.test(line.msg));

if (process.env.DATABASE_URL) {
  test('the warning follows the server: every churning table when autovacuum is off there, none when on', async (context) => {
    context.service = await startTestApp();
    const [settings] = await context.service.deps.db.query<{ on: boolean }>(
      `SELECT current_setting('autovacuum')::boolean AND current_setting('track_counts')::boolean AS on`,
    );
    const warnings = autovacuumWarnings(context.service);
    if (settings.on) {
      assert.equal(warnings, [], 'no warning where autovacuum runs');
    } else {
      assert.is(warnings.length, 1);
      assert.equal(warnings[0].tables, [...CHURNING_TABLES, 'pgboss.job']);
      assert.match(warnings[0].msg, /off on the database server/);
    }
  });

  test('a table with autovacuum_enabled = false is found, however the value is written, and warned of at the next start', async (context) => {
    const { db } = context.service.deps;
    assert.equal((await autovacuumState(db)).tablesOff, []);
    await db.query('ALTER TABLE webhook_inbox SET (autovacuum_enabled = false)');
    await db.query('ALTER TABLE sessions SET (autovacuum_enabled = off, fillfactor = 90)');
    await db.query('ALTER TABLE rate_limits SET (autovacuum_enabled = true)');
    const state = await autovacuumState(db);
    assert.equal(state.tablesOff, ['sessions', 'webhook_inbox']);

    context.service = await context.service.restart({});
    const warnings = autovacuumWarnings(context.service);
    assert.is(warnings.length, 1);
    if (state.server) {
      assert.equal(warnings[0].tables, ['sessions', 'webhook_inbox']);
      assert.match(warnings[0].msg, /autovacuum_enabled is false/);
    } else {
      assert.equal(warnings[0].tables, [...CHURNING_TABLES, 'pgboss.job'], 'the server-wide setting says the most');
    }

    await context.service.deps.db.query('ALTER TABLE webhook_inbox RESET (autovacuum_enabled)');
    await context.service.deps.db.query('ALTER TABLE sessions RESET (autovacuum_enabled)');
    assert.equal((await autovacuumState(context.service.deps.db)).tablesOff, []);
  });
}

test.run();
