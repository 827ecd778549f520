import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Queryable } from '../server/src/lib/db.ts';
import { listDeliveries } from '../server/src/webhooks/inbox/repo.ts';
import { bearer, registerAndVerify, type Account } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';

// The operator's inbox list at the size of a real inbox: every filter reads a page from an
// index. A file of its own: the million rows stay in this file's database, which is dropped
// with it, instead of being deleted again row by row (as long as loading them) for the tests
// that would follow. On PostgreSQL only: the embedded database plans the same SQL the same
// way, and loading a million rows into it costs minutes, not seconds.

const onServer = Boolean(process.env.DATABASE_URL);

type Context = { service: TestService; admin: Account };
const test = suite<Context>('REST admin: the webhook inbox list with a million deliveries');

test.before(async (context) => {
  context.service = await startTestApp();
  context.admin = await registerAndVerify(context.service, 'operator@example.com');
  await context.service.deps.db.query(`UPDATE accounts SET role = 'admin' WHERE id = $1`, [context.admin.user.id]);
});
test.after(async ({ service }) => {
  await service?.close();
});

if (onServer) {
  test('with a million deliveries, every filter of the list reads a page from an index, cheaply, whatever the page', async ({ service, admin }) => {
    const db = service.deps.db;
    // The table's indexes and unique constraints (all but the primary key, which other tables
    // reference) are built again after the load, from their own definitions: one sorted build
    // each costs a fraction of a million inserts into each.
    const indexes = await db.query<{ name: string; definition: string }>(
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
        WHERE tablename = 'webhook_inbox' AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'webhook_inbox'::regclass)`,
    );
    const uniques = await db.query<{ name: string; definition: string }>(
      `SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conrelid = 'webhook_inbox'::regclass AND contype = 'u'`,
    );
    assert.ok(indexes.some((index) => index.name === 'webhook_inbox_provider_state_recent_idx'), 'the list indexes are among them');
    for (const { name } of indexes) await db.query(`DROP INDEX ${name}`);
    for (const { name } of uniques) await db.query(`ALTER TABLE webhook_inbox DROP CONSTRAINT ${name}`);
    // Skewed like a real inbox: almost everything processed, a few ignored, very few dead;
    // the operator bot a sliver of the traffic. Rare filters are where a missing index shows.
    // Ids rise with arrival, as the service's own (UUIDv7) do: the primary key is appended
    // to, not written at random.
    await db.query(`INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at, state, enqueued_at)
      SELECT lpad(to_hex(2000000 - i), 32, '0')::uuid,
        CASE WHEN i % 1000 = 500 THEN 'operator' WHEN i % 20 < 8 THEN 'billing' WHEN i % 20 < 16 THEN 'payment'
             WHEN i % 20 < 19 THEN 'messengerone' ELSE 'messengertwo' END,
        '', 'seed-' || i, '\\x7b7d', now() - make_interval(secs => i),
        CASE WHEN i % 1000 = 0 THEN 'dead' WHEN i % 200 = 1 THEN 'received' WHEN i % 100 = 2 THEN 'ignored' ELSE 'processed' END,
        -- Enqueued "tomorrow": neither the dispatcher nor the sweeper takes the waiting ones.
        now() + interval '1 day'
      FROM generate_series(1, 1000000) AS i`);
    // Built in memory, not in sorted runs on disk (PostgreSQL's default allows 64 MB).
    await db.transaction(async (tx) => {
      await tx.query(`SET LOCAL maintenance_work_mem = '256MB'`);
      for (const { definition } of indexes) await tx.query(definition);
      for (const { name, definition } of uniques) await tx.query(`ALTER TABLE webhook_inbox ADD CONSTRAINT ${name} ${definition}`);
    });
    await db.query('ANALYZE webhook_inbox');
    const plans: Array<Record<string, unknown>> = [];
    const explaining: Queryable = {
      query: async (text, values) => {
        const sql = typeof text === 'string' ? text : text.text;
        const [row] = await db.query<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(`EXPLAIN (FORMAT JSON) ${sql}`, values);
        plans.push(row['QUERY PLAN'][0].Plan);
        return [];
      },
    };
    const middle = { receivedAt: new Date(Date.now() - 500_000 * 1000), id: randomUUID() };
    // The planner may read a common filter from the plain recency index (a few hundred entries
    // for a page); what must never happen is a table scan, a sort, or a costly plan.
    const filters: Array<Parameters<typeof listDeliveries>[1]> = [
      {},
      { provider: 'billing' },
      { provider: 'operator' },
      { state: 'dead' },
      { state: 'received' },
      { provider: 'payment', state: 'ignored' },
      { provider: 'operator', state: 'processed', since: new Date(Date.now() - 900_000 * 1000) },
      { state: 'dead', until: new Date(Date.now() - 100_000 * 1000) },
    ];
    for (const filter of filters) {
      for (const after of [undefined, middle]) {
        plans.length = 0;
        await listDeliveries(explaining, filter, after, 51);
        const plan = plans[0] as { 'Node Type': string; 'Total Cost': number };
        const text = JSON.stringify(plan);
        const what = `${JSON.stringify(filter)} ${after ? 'deep page' : 'first page'}: ${text.replace(/"(Parallel Aware|Async Capable|Startup Cost|Plan Width|Parent Relationship)":[^,]*,/g, '').slice(0, 500)}`;
        assert.is(plan['Node Type'], 'Limit', what);
        assert.match(text, /"Node Type":"Index (Only )?Scan","[^}]*"Index Name":"webhook_inbox_\w+_idx"/, what);
        // An incremental sort (ties of received_at only, on an index already in that order) is fine; a full one is not.
        assert.not.match(text, /Seq Scan|"Node Type":"Sort"/, what);
        assert.ok(plan['Total Cost'] < 500, `estimated cost ${plan['Total Cost']}: ${what}`);
      }
    }
    const page = await request(service.url, 'GET', '/api/v1/admin/inbox?state=dead&limit=200', { headers: bearer(admin.token) });
    assert.is(page.status, 200);
    assert.is(page.body.items.length, 200);
    assert.ok(page.body.items.every((item: { state: string }) => item.state === 'dead'));
  });
}

test.run();
