import { initTRPC } from '@trpc/server';
import pg from 'pg';
import { Sequelize } from 'sequelize';
import {
  acceptsRequestBody,
  coerceSchema,
  createProcedureCache,
  forEachOpenApiProcedure,
  getBody,
  getContentType,
  getInputOutputParsers,
  getQuery,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  instanceofZodTypeOptional,
  normalizePath,
  unwrapZodType,
  zodSupportsCoerce,
  type OpenApiMeta,
  type OpenApiRouter,
} from 'trpc-to-openapi';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import type { Context } from '../server/src/trpc/context.ts';
import { createDatabase, type Db } from '../server/src/lib/db.ts';
import { startEmbeddedPostgres } from '../server/src/lib/embedded-postgres.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { fetchOrderIndex, fetchStatement, outcomeStatements } from '../server/src/lib/pg-boss.internals.ts';
import { startQueue, type PgBoss } from '../server/src/lib/queue.ts';
import { connectionOf, poolOf } from '../server/src/lib/sequelize.internals.ts';
import { appRouter } from '../server/src/router.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { eventually } from './helpers/wait.ts';

// Every private API of a library that the code leans on is fenced in one file
// (`*.internals.ts`, and the fast path gateway/src/fast-paths/openapi-handler.ts for trpc-to-openapi). Each is
// tried here as the code uses it, so an upgrade that changes one fails here, by name,
// before it fails somewhere less obvious.

type Context_ = { database: TestDatabase; url: string; stop(): Promise<void> };
const test = suite<Context_>('internals: the private library APIs we fence still behave as we rely on');
const logger = createLogger('silent');

test.before(async (context) => {
  context.database = await createTestDatabase();
  if (context.database.env.DATABASE_URL) {
    context.url = context.database.env.DATABASE_URL;
    context.stop = async () => {};
  } else {
    const embedded = await startEmbeddedPostgres(context.database.env.DATA_DIR, logger);
    context.url = embedded.url;
    context.stop = () => embedded.stop();
  }
});
test.after(async (context) => {
  await context.stop?.();
  await context.database?.drop();
});

/** A queue named `name` on its own pool, with every SQL text pg-boss sent through it; both stop after `work`. */
async function withRecordedQueue(url: string, name: string, work: (queue: { db: Db; boss: PgBoss; sent: Set<string> }) => Promise<void>): Promise<void> {
  const db = await createDatabase({ databaseUrl: url, dataDir: '', logger });
  const sent = new Set<string>();
  const recording = { ...db, executeSql: (text: string, values?: unknown[]) => (sent.add(text), db.executeSql(text, values)) };
  const boss = await startQueue({ db: recording, logger, supervise: false, queues: [{ name }] });
  try {
    await work({ db, boss, sent });
  } finally {
    await boss.stop({ graceful: false, wait: true });
    await db.close();
  }
}

test("pg-boss 10: plans.js builds the completion and failure statements, and they are what pg-boss sends", async ({ url }) => {
  const statements = outcomeStatements('pgboss');
  assert.is(statements.size, 2);
  for (const text of statements) assert.match(text, /pgboss\.job\b/);
  assert.ok([...statements].some((text) => text.includes("state = 'completed'")), 'one completes jobs');
  assert.ok([...statements].some((text) => text.includes("'failed'")), 'one fails them');

  await withRecordedQueue(url, 'fence', async ({ boss, sent }) => {
    await boss.send('fence', {});
    await boss.work('fence', { pollingIntervalSeconds: 0.5 }, async () => {});
    await eventually('a job completed', () => [...statements].some((text) => sent.has(text)));
  });
});

type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };

function findPlan(node: PlanNode, wanted: (node: PlanNode) => boolean): PlanNode | undefined {
  if (wanted(node)) return node;
  for (const child of node.Plans ?? []) {
    const found = findPlan(child, wanted);
    if (found) return found;
  }
  return undefined;
}

test("pg-boss 10: its fetch is what plans.js builds, and it reads a queue's batch in order from an index, without sorting the queue", async ({ url }) => {
  const fetch = fetchStatement('pgboss');
  assert.match(fetch, /ORDER BY priority desc, created_on, id/);
  await withRecordedQueue(url, 'fence-order', async ({ db, boss, sent }) => {
    // A backlog large enough that reading and sorting all of it costs more than the batch.
    for (let start = 0; start < 5000; start += 1000) await boss.insert(Array.from({ length: 1000 }, (_, i) => ({ name: 'fence-order', data: { n: start + i } })));
    await db.executeSql('ANALYZE pgboss.job', []);
    const rows = await db.executeSql(`EXPLAIN (FORMAT JSON) ${fetch}`, ['fence-order', 100]);
    // The part that picks the batch: the CTE `next` (the window over the batch sorts its 100 rows, which is fine).
    const plan = (rows as unknown as { rows: Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }> }).rows[0]['QUERY PLAN'][0].Plan;
    const next = findPlan(plan, (node) => node['Subplan Name'] === 'CTE next');
    assert.ok(next, `no CTE "next" in the plan of pg-boss's fetch: ${JSON.stringify(plan)}`);
    const picked = JSON.stringify(next);
    assert.match(picked, /"Node Type":"Index Scan"/, picked);
    assert.not.match(picked, /"Node Type":"Sort"/, `the fetch sorts the whole queue to pick its batch: ${picked}`);
    await boss.work('fence-order', { pollingIntervalSeconds: 0.5, batchSize: 100 }, async () => {});
    await eventually('pg-boss sent the fetch built above', () => sent.has(fetch));
  });
});

// Two connections at once: the embedded database has one.
if (process.env.DATABASE_URL) {
  test('pg-boss 10: once the fetch-order index exists, a start does not wait for a transaction that writes jobs', async ({ url }) => {
    await withRecordedQueue(url, 'fence-start', async ({ boss }) => {
      const writer = new pg.Client(url);
      const starter = new pg.Client(url);
      await writer.connect();
      await starter.connect();
      try {
        await writer.query('BEGIN');
        await boss.insert([{ name: 'fence-start', data: {} }], { db: { executeSql: (text, values) => writer.query(text, values) } });
        // CREATE INDEX IF NOT EXISTS alone would wait here for the writer's commit.
        await starter.query("SET lock_timeout = '1s'");
        await starter.query(fetchOrderIndex('pgboss'));
      } finally {
        await writer.query('ROLLBACK');
        await Promise.all([writer.end(), starter.end()]);
      }
    });
  });
}

test("Sequelize 6: its connection manager lends raw pg clients, and a transaction's connection is its own", async ({ url }) => {
  const sequelize = new Sequelize(url, { dialect: 'postgres', dialectModule: pg, logging: false, pool: { max: 2 } });
  try {
    const pool = poolOf(sequelize);
    const client = await pool.acquire();
    assert.is((await client.query('SELECT 41 + 1 AS answer')).rows[0].answer, 42);
    pool.release(client);
    const inside = await sequelize.transaction(async (transaction) => {
      const connection = connectionOf(transaction);
      await connection.query(`SET LOCAL application_name = 'fenced'`);
      const [rows] = await sequelize.query(`SELECT current_setting('application_name') AS name`, { transaction });
      return (rows as Array<{ name: string }>)[0].name;
    });
    assert.is(inside, 'fenced', 'the raw client runs inside the Sequelize transaction');
  } finally {
    await sequelize.close();
  }
});

test('trpc-to-openapi 3: the internals the REST adapter uses route, read and coerce as it expects', () => {
  const find = createProcedureCache(appRouter as unknown as OpenApiRouter);
  const me = find('GET', normalizePath('/auth/me/'));
  assert.is(me?.procedure?.path, 'auth.me');
  assert.is(me?.procedure?.type, 'query');
  assert.is(find('POST', '/auth/login')?.procedure?.type, 'mutation');
  assert.is(find('GET', '/auth/login')?.procedure, undefined);
  const login = find('POST', '/auth/login')!.procedure!.procedure;
  const schema = unwrapZodType(getInputOutputParsers(login).inputParser, true);
  assert.ok(instanceofZodTypeObject(schema));
  assert.not.ok(instanceofZodTypeLikeVoid(schema));
  assert.type(coerceSchema, 'function');
  assert.type(zodSupportsCoerce, 'boolean');
});

test('trpc-to-openapi 3: getBody takes a body that was read before it', async () => {
  const req = { body: { email: 'a@b.example' }, headers: { 'content-type': 'application/json' } };
  assert.equal(await getBody(req as never), { email: 'a@b.example' });
});

test('trpc-to-openapi 3: which methods read a body, the Content-Type, and a query string as the adapter reads them', () => {
  assert.equal(['GET', 'DELETE', 'POST', 'PUT', 'PATCH'].map((method) => acceptsRequestBody(method as never)), [false, false, true, true, true]);
  assert.is(getContentType({ headers: { 'content-type': 'application/json' } } as never), 'application/json');
  assert.is(getContentType({ headers: {} } as never), undefined);
  // One value as itself, a repeated key as an array: openapi-handler.ts makes the one an array where the schema wants one.
  const query = getQuery({ headers: {} } as never, new URL('http://h/x?limit=5&provider=a&provider=b'));
  assert.equal(query, { limit: '5', provider: ['a', 'b'] });
  assert.ok(instanceofZodTypeOptional(z.array(z.string()).optional() as never));
  assert.not.ok(instanceofZodTypeOptional(z.array(z.string()) as never));
});

test('trpc-to-openapi 3: coerceSchema makes a query-string input read its numbers and booleans, in place', () => {
  const schema = z.object({ limit: z.number().int(), verbose: z.boolean(), name: z.string() });
  assert.ok(zodSupportsCoerce, 'without coercion every numeric query parameter of the REST routes is refused');
  coerceSchema(schema as never);
  assert.equal(schema.parse({ limit: '60', verbose: 'true', name: '7' }), { limit: 60, verbose: true, name: '7' });
});

test("trpc-to-openapi 3: forEachOpenApiProcedure walks a router's REST procedures by their tRPC path, with their openapi meta", () => {
  // openapi-handler.ts reads each route's pattern (`/things/{id}`) this way, for the metrics' route label.
  const t = initTRPC.context<Context>().meta<OpenApiMeta>().create();
  const router = t.router({
    things: t.router({ show: t.procedure.meta({ openapi: { method: 'GET', path: '/things/{id}/' } }).input(z.object({ id: z.string() })).query(() => 'x') }),
    hidden: t.procedure.input(z.void()).query(() => 'y'),
  });
  const seen: Array<[string, string]> = [];
  forEachOpenApiProcedure((router as unknown as OpenApiRouter)._def.procedures, ({ path, meta }) => seen.push([path, normalizePath(meta.openapi!.path)]));
  assert.equal(seen, [['things.show', '/things/{id}']]);
});

test('tRPC 11: a procedure found by the route table runs when called with { path, getRawInput, ctx, type }, as createCaller calls it', async () => {
  // openapi-handler.ts calls the procedure the route table found this way, skipping createCaller's proxy.
  const t = initTRPC.context<Context>().meta<OpenApiMeta>().create();
  const router = t.router({
    echo: t.procedure
      .meta({ openapi: { method: 'GET', path: '/echo' } })
      .input(z.object({ word: z.string() }))
      .output(z.object({ word: z.string(), requestId: z.string() }))
      .query(({ input, ctx }) => ({ word: input.word, requestId: ctx.request.requestId })),
  });
  const found = createProcedureCache(router as unknown as OpenApiRouter)('GET', '/echo');
  assert.is(found?.procedure?.path, 'echo');
  const procedure = found!.procedure!.procedure as unknown as (options: object) => Promise<unknown>;
  const ctx = { request: { requestId: 'fence' } } as unknown as Context;
  assert.equal(await procedure({ path: 'echo', getRawInput: async () => ({ word: 'hi' }), ctx, type: 'query' }), { word: 'hi', requestId: 'fence' });
});

test.run();
