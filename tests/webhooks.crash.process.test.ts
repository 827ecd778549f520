import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
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
let token = '';
let siteKey = '';
let channelId = '';

type Delivery = { kind: 'payment' | 'message'; key: string; path: string; body: string };
const deliveries: Delivery[] = [];
const acked = new Set<number>();

async function startChild(): Promise<void> {
  const started = spawnService(env, 'all');
  child = started.child;
  outputs.push(started.output);
  await waitUntilReady(`${url}/readyz`, started);
}

function exited(process: ChildProcess): Promise<void> {
  return new Promise((resolve) => (process.exitCode !== null || process.signalCode !== null ? resolve() : process.once('exit', () => resolve())));
}

async function trpc(method: 'GET' | 'POST', path: string, input?: unknown) {
  const headers = { authorization: `Bearer ${token}` };
  const res =
    method === 'POST'
      ? await request(url, 'POST', `/trpc/${path}`, { headers, json: input })
      : await request(url, 'GET', `/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${res.text}`);
  return res.body.result.data;
}

function send(delivery: Delivery): Promise<Response> {
  const headers =
    delivery.kind === 'payment'
      ? stripeHeaders(delivery.body, STRIPE_SECRET, Math.floor(Date.now() / 1000))
      : viberHeaders(delivery.body, VIBER_TOKEN);
  return fetch(url + delivery.path, { method: 'POST', headers, body: delivery.body });
}

async function effects() {
  const payments: Array<{ reference: string; status: string }> = (await trpc('GET', 'sites.payments', { siteKey })).items;
  const messages: Array<{ text: string }> = (await trpc('GET', 'channels.messages', { channelId })).items;
  const count = new Map<string, number>();
  for (const key of [...payments.filter((p) => p.status === 'paid').map((p) => p.reference), ...messages.map((m) => m.text)]) {
    count.set(key, (count.get(key) ?? 0) + 1);
  }
  return count;
}

test.before(async () => {
  database = await createTestDatabase();
  smtp = await startSmtpServer();
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const inherited = { ...process.env } as Record<string, string>;
  delete inherited.DATABASE_URL;
  env = { ...inherited, ...serviceEnv(port, smtp.url), LOG_LEVEL: 'warn', ...database.env };
});

test.after(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await exited(child);
  }
  await smtp?.close();
  await database?.drop();
});

test('setup: an account with a site and a messengertwo channel on the child process', async () => {
  await startChild();
  const account = await createAccount({ url, smtp });
  token = account.token;
  ({ siteKey } = await trpc('POST', 'sites.create', { name: 'Crash shop', paymentWebhookSecret: STRIPE_SECRET }));
  ({ channelId } = await trpc('POST', 'channels.create', { platform: 'messengertwo', name: 'Crash chat', botToken: VIBER_TOKEN }));
  const created = Math.floor(Date.now() / 1000);
  for (let i = 0; i < DELIVERIES; i++) {
    if (i % 2 === 0) {
      const pi = `pi_crash_${i}`;
      const event = stripeEvent({ id: `evt_crash_${i}`, type: 'payment_intent.succeeded', created, object: { id: pi, object: 'payment_intent', amount: 100 + i, currency: 'eur' } });
      deliveries.push({ kind: 'payment', key: pi, path: `/webhook/payment/${siteKey}`, body: JSON.stringify(event) });
    } else {
      const text = `crash message ${i}`;
      deliveries.push({ kind: 'message', key: text, path: `/messengertwo/bot/${channelId}`, body: viberMessage(viberToken(i), { id: `U${i % 7}`, name: 'V' }, text) });
    }
  }
});

test('SIGKILL mid-stream: after a restart every acknowledged delivery took effect exactly once', async () => {
  let next = 0;
  let killed = false;
  const victim = child!;
  const lane = async () => {
    while (!killed && next < deliveries.length) {
      const index = next++;
      try {
        const res = await send(deliveries[index]);
        await res.arrayBuffer();
        if (res.status === 200) acked.add(index);
      } catch {
        // Connection refused or reset by the kill: not acknowledged, the provider will retry.
      }
      if (!killed && acked.size >= KILL_AFTER_ACKS) {
        killed = true;
        victim.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: 24 }, lane));
  await exited(victim);
  assert.ok(acked.size >= KILL_AFTER_ACKS, `acknowledged ${acked.size}`);
  assert.ok(acked.size < deliveries.length, 'the kill interrupted the stream');

  await startChild();
  // Jobs the dead worker held are handed back after their expiry (15 s) by the sweeper.
  const count = await eventually('every acknowledged delivery in effect', async () => {
    const current = await effects();
    return [...acked].every((index) => current.has(deliveries[index].key)) ? current : undefined;
  }, 120_000);
  for (const index of acked) assert.is(count.get(deliveries[index].key), 1, deliveries[index].key);
  for (const [key, n] of count) assert.is(n, 1, `${key} took effect ${n} times`);
});

test('re-sending every delivery converges to exactly one effect each', async () => {
  for (let start = 0; start < deliveries.length; start += 50) {
    const answers = await Promise.all(deliveries.slice(start, start + 50).map((d) => send(d)));
    for (const res of answers) {
      await res.arrayBuffer();
      assert.is(res.status, 200);
    }
  }
  const count = await eventually('all deliveries in effect', async () => {
    const current = await effects();
    return current.size === deliveries.length ? current : undefined;
  }, 60_000);
  for (const delivery of deliveries) assert.is(count.get(delivery.key), 1, delivery.key);
});

test('the inbox holds one processed row per delivery, nothing left behind', async () => {
  child!.kill('SIGTERM');
  await exited(child!);
  assert.is(child!.exitCode, 0, 'graceful stop after SIGTERM');
  const db = await createDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR, logger: createLogger('silent') });
  try {
    const rows = await db.query<{ provider: string; state: string; n: string }>(
      `SELECT provider, state, count(*) AS n FROM webhook_inbox GROUP BY provider, state ORDER BY provider, state`,
    );
    assert.equal(
      rows.map((r) => [r.provider, r.state, Number(r.n)]),
      [
        ['messengertwo', 'processed', DELIVERIES / 2],
        ['payment', 'processed', DELIVERIES / 2],
      ],
    );
    const [messages] = await db.query<{ n: string; distinct_texts: string }>(
      `SELECT count(*) AS n, count(DISTINCT text) AS distinct_texts FROM channel_messages`,
    );
    assert.is(Number(messages.n), DELIVERIES / 2);
    assert.is(Number(messages.distinct_texts), DELIVERIES / 2);
  } finally {
    await db.close();
  }
});

test.run();

// uvu sets a failing exit code; the child's last log lines then help to see why.
process.on('exit', (code) => {
  if (code !== 0) console.error(outputs.map((output) => output()).join('\n').split('\n').slice(-40).join('\n'));
});
