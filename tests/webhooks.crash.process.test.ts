import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createDatabase } from '../server/src/lib/db.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { spawnService, waitUntilReady } from './helpers/process.ts';
import { freePort, request, serviceEnv } from './helpers/service.ts';
import { startSmtpServer, type SmtpServer } from './helpers/smtp.ts';
import { eventually } from './helpers/wait.ts';
import { createAccount, stripeEvent, stripeHeaders, viberHeaders, viberMessage, viberToken } from './helpers/webhook-fixtures.ts';

// The service runs as a child process (`--role=all`, as `npm start` does). Signed deliveries
// stream in, the process is SIGKILLed mid-stream, and restarted on the same database. Every
// delivery that was answered 200 must have taken effect exactly once; re-sending all of them
// (providers retry what was not acknowledged) must converge to exactly one effect each.

const STRIPE_SECRET = `whsec_${randomBytes(24).toString('base64url')}`;
const VIBER_TOKEN = `crash-${randomBytes(12).toString('hex')}`;
const DELIVERIES = 600;
const KILL_AFTER_ACKS = 200;

let database: TestDatabase;
let smtp: SmtpServer;
let env: Record<string, string>;
let url: string;
let child: ChildProcess | undefined;
/** Each child's output, in start order: the last lines explain a failure. */
const outputs: Array<() => string> = [];

type Delivery = { kind: 'payment' | 'message'; key: string; path: string; body: string };
/** What one test sends to: an account of its own with a site and a messengertwo channel. */
type Fixture = { token: string; siteKey: string; channelId: string; deliveries: Delivery[] };

async function startChild(): Promise<void> {
  const started = spawnService(env, 'all');
  child = started.child;
  outputs.push(started.output);
  await waitUntilReady(`${url}/readyz`, started);
}

const running = (process: ChildProcess | undefined) => process !== undefined && process.exitCode === null && process.signalCode === null;

function exited(process: ChildProcess): Promise<void> {
  return new Promise((resolve) => (process.exitCode !== null || process.signalCode !== null ? resolve() : process.once('exit', () => resolve())));
}

async function trpc(token: string, method: 'GET' | 'POST', path: string, input?: unknown) {
  const headers = { authorization: `Bearer ${token}` };
  const res =
    method === 'POST'
      ? await request(url, 'POST', `/trpc/${path}`, { headers, json: input })
      : await request(url, 'GET', `/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${res.text}`);
  return res.body.result.data;
}

/** A fresh account, site and channel on the running child, and `count` deliveries for them (half payments, half messages). */
async function createFixture(label: string, count: number): Promise<Fixture> {
  const { token } = await createAccount({ url, smtp }, label);
  const { siteKey } = await trpc(token, 'POST', 'sites.create', { name: `${label} shop`, paymentWebhookSecret: STRIPE_SECRET });
  const { channelId } = await trpc(token, 'POST', 'channels.create', { platform: 'messengertwo', name: `${label} chat`, botToken: VIBER_TOKEN });
  const created = Math.floor(Date.now() / 1000);
  const deliveries: Delivery[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 2 === 0) {
      const pi = `pi_${label}_${i}`;
      const event = stripeEvent({ id: `evt_${label}_${i}`, type: 'payment_intent.succeeded', created, object: { id: pi, object: 'payment_intent', amount: 100 + i, currency: 'eur' } });
      deliveries.push({ kind: 'payment', key: pi, path: `/webhook/payment/${siteKey}`, body: JSON.stringify(event) });
    } else {
      const text = `${label} message ${i}`;
      deliveries.push({ kind: 'message', key: text, path: `/messengertwo/bot/${channelId}`, body: viberMessage(viberToken(i), { id: `U${i % 7}`, name: 'V' }, text) });
    }
  }
  return { token, siteKey, channelId, deliveries };
}

function send(delivery: Delivery): Promise<Response> {
  const headers =
    delivery.kind === 'payment'
      ? stripeHeaders(delivery.body, STRIPE_SECRET, Math.floor(Date.now() / 1000))
      : viberHeaders(delivery.body, VIBER_TOKEN);
  return fetch(url + delivery.path, { method: 'POST', headers, body: delivery.body });
}

/** Sends every delivery, fifty at a time, each answered 200. */
async function sendAll(deliveries: Delivery[]): Promise<void> {
  for (let start = 0; start < deliveries.length; start += 50) {
    const answers = await Promise.all(deliveries.slice(start, start + 50).map((d) => send(d)));
    for (const res of answers) {
      await res.arrayBuffer();
      assert.is(res.status, 200);
    }
  }
}

async function effects({ token, siteKey, channelId }: Fixture) {
  const payments: Array<{ reference: string; status: string }> = (await trpc(token, 'GET', 'sites.payments', { siteKey })).items;
  const messages: Array<{ text: string }> = (await trpc(token, 'GET', 'channels.messages', { channelId })).items;
  const count = new Map<string, number>();
  for (const key of [...payments.filter((p) => p.status === 'paid').map((p) => p.reference), ...messages.map((m) => m.text)]) {
    count.set(key, (count.get(key) ?? 0) + 1);
  }
  return count;
}

/** Waits until every delivery took effect, and checks each did so exactly once. */
async function assertConverged(fixture: Fixture): Promise<void> {
  const count = await eventually('all deliveries in effect', async () => {
    const current = await effects(fixture);
    return current.size === fixture.deliveries.length ? current : undefined;
  });
  for (const delivery of fixture.deliveries) assert.is(count.get(delivery.key), 1, delivery.key);
}

/** The fixture's inbox rows, per provider and state, read from the database itself. */
async function inboxRows({ siteKey, channelId }: Fixture) {
  const db = await createDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR, logger: createLogger('silent') });
  try {
    const rows = await db.query<{ provider: string; state: string; n: string }>(
      `SELECT provider, state, count(*) AS n FROM webhook_inbox WHERE scope = ANY($1) GROUP BY provider, state ORDER BY provider, state`,
      [[siteKey, channelId]],
    );
    return rows.map((r) => [r.provider, r.state, Number(r.n)]);
  } finally {
    await db.close();
  }
}

/**
 * Providers retry what was not acknowledged, and some of what was: every delivery is sent
 * again, must converge to one effect each, and leave one processed inbox row each (read with
 * the service stopped: the embedded database serves one process at a time).
 */
async function resendAndAssertOneRowEach(fixture: Fixture): Promise<void> {
  await sendAll(fixture.deliveries);
  await assertConverged(fixture);
  const stopping = child!;
  stopping.kill('SIGTERM');
  await exited(stopping);
  assert.equal(await inboxRows(fixture), [
    ['messengertwo', 'processed', fixture.deliveries.length / 2],
    ['payment', 'processed', fixture.deliveries.length / 2],
  ]);
}

test.before(async () => {
  database = await createTestDatabase();
  smtp = await startSmtpServer();
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const inherited = { ...process.env } as Record<string, string>;
  delete inherited.DATABASE_URL;
  env = { ...inherited, ...serviceEnv(port, smtp.url), LOG_LEVEL: 'warn', ...database.env };
  await startChild();
});

test.after(async () => {
  if (child && running(child)) {
    child.kill('SIGKILL');
    await exited(child);
  }
  await smtp?.close();
  await database?.drop();
});

test('SIGKILL mid-stream: after a restart every acknowledged delivery took effect exactly once; re-sending them all converges to one effect and one processed inbox row each', async () => {
  if (!running(child)) await startChild();
  const fixture = await createFixture('crash', DELIVERIES);
  const victim = child!;
  const { acked } = await stream(fixture.deliveries, KILL_AFTER_ACKS, () => void victim.kill('SIGKILL'), true);
  await exited(victim);
  assert.ok(acked.size >= KILL_AFTER_ACKS, `acknowledged ${acked.size}`);
  assert.ok(acked.size < fixture.deliveries.length, 'the kill interrupted the stream');

  await startChild();
  // Jobs the dead worker held are handed back after their expiry (15 s) by the sweeper; rows
  // it was applying straight from the inbox were rolled back, and wait for the next look.
  await assertAckedOnce(fixture, acked);

  await resendAndAssertOneRowEach(fixture);
});

/**
 * Streams `deliveries` from 24 connections at once, calling `interrupt` once `after` of them
 * were acknowledged (the stream goes on meanwhile, unless `stopOnInterrupt`). Returns the
 * indexes of those answered 200, and how many were answered otherwise or not at all.
 */
async function stream(deliveries: Delivery[], after: number, interrupt: () => Promise<void> | void, stopOnInterrupt: boolean) {
  const acked = new Set<number>();
  let refused = 0;
  let next = 0;
  let interrupted: Promise<void> | undefined;
  const lane = async () => {
    while (!(stopOnInterrupt && interrupted) && next < deliveries.length) {
      const index = next++;
      try {
        const res = await send(deliveries[index]);
        await res.arrayBuffer();
        if (res.status === 200) acked.add(index);
        else refused++;
      } catch {
        // Connection refused or reset: not acknowledged, the provider will retry.
        refused++;
      }
      if (!interrupted && acked.size >= after) interrupted = Promise.resolve(interrupt());
    }
  };
  await Promise.all(Array.from({ length: 24 }, lane));
  await interrupted;
  return { acked, refused };
}

/** Waits until every acknowledged delivery took effect, and checks each, and all else, did so exactly once. */
async function assertAckedOnce(fixture: Fixture, acked: Set<number>): Promise<void> {
  const { deliveries } = fixture;
  const count = await eventually('every acknowledged delivery in effect', async () => {
    const current = await effects(fixture);
    return [...acked].every((index) => current.has(deliveries[index].key)) ? current : undefined;
  }, 120_000);
  for (const index of acked) assert.is(count.get(deliveries[index].key), 1, deliveries[index].key);
  for (const [key, n] of count) assert.is(n, 1, `${key} took effect ${n} times`);
}

// A database server is needed to drop and refuse the connections of one database.
if (process.env.DATABASE_URL) {
  test('the database drops every connection mid-stream and refuses new ones a while: every acknowledged delivery took effect exactly once; re-sending converges', async () => {
    if (!running(child)) await startChild();
    const output = outputs.at(-1)!;
    const fixture = await createFixture('outage', DELIVERIES);
    const databaseName = new URL(database.env.DATABASE_URL).pathname.slice(1);
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    const outage = async () => {
      // A failover as the service sees it: every connection dropped mid-statement, new ones
      // refused, until the worker has found the database away.
      await admin.query(`ALTER DATABASE ${databaseName} ALLOW_CONNECTIONS false`);
      try {
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [databaseName]);
        await eventually('the worker to find the database away', () => output().includes('inbox dispatch failed'));
      } finally {
        await admin.query(`ALTER DATABASE ${databaseName} ALLOW_CONNECTIONS true`);
      }
    };
    try {
      const { acked, refused } = await stream(fixture.deliveries, KILL_AFTER_ACKS, outage, false);
      assert.ok(refused > 0, 'some deliveries were refused while the database was away');
      assert.ok(acked.size > KILL_AFTER_ACKS, 'and the stream went on once it was back');
      await assertAckedOnce(fixture, acked);
    } finally {
      await admin.end();
    }
    assert.ok(running(child), 'the service rode the outage out');
    await resendAndAssertOneRowEach(fixture);
  });
}

test('SIGTERM once the deliveries are in effect: a graceful stop, and one processed inbox row per delivery', async () => {
  if (!running(child)) await startChild();
  const fixture = await createFixture('calm', 40);
  await sendAll(fixture.deliveries);
  await assertConverged(fixture);
  const stopping = child!;
  stopping.kill('SIGTERM');
  await exited(stopping);
  assert.is(stopping.exitCode, 0, 'graceful stop after SIGTERM');
  assert.equal(await inboxRows(fixture), [
    ['messengertwo', 'processed', 20],
    ['payment', 'processed', 20],
  ]);
});

test.run();

// uvu sets a failing exit code; the child's last log lines then help to see why.
process.on('exit', (code) => {
  if (code !== 0) console.error(outputs.map((output) => output()).join('\n').split('\n').slice(-40).join('\n'));
});
