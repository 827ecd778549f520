import type { ChildProcess } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createEndpoint } from '../server/src/modules/events/events.service.ts';
import { createLogger, loadConfig, openDeps } from '../server/src/index.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { EventReceiver } from './helpers/event-receiver.ts';
import { spawnService, waitUntilReady } from './helpers/process.ts';
import { freePort, request, serviceEnv } from './helpers/service.ts';
import { startSmtpServer, type SmtpServer } from './helpers/smtp.ts';
import { eventually } from './helpers/wait.ts';
import { createAccount, type TestAccount } from './helpers/webhook-fixtures.ts';

// Events out survive a crash (docs/EVENTS.md): the service runs as a child process and is
// SIGKILLed once after its changes committed but before anything was sent (it runs without a
// worker), and once while requests are in flight to a receiver that does not answer. After a
// restart every event arrives, at least once, with the same webhook-id it was first sent
// with, and each account's events in the order they happened. The receiver verifies each
// request with the standardwebhooks package.

let database: TestDatabase;
let smtp: SmtpServer;
let receiver: EventReceiver;
let env: Record<string, string>;
let url: string;
let child: ChildProcess | undefined;
const outputs: Array<() => string> = [];
let accounts: TestAccount[] = [];

async function startChild(role: 'all' | 'gateway'): Promise<void> {
  const started = spawnService(env, role);
  child = started.child;
  outputs.push(started.output);
  await waitUntilReady(`${url}/readyz`, started);
}

const running = (process: ChildProcess | undefined) => process !== undefined && process.exitCode === null && process.signalCode === null;

async function kill(signal: NodeJS.Signals): Promise<void> {
  const victim = child!;
  if (!running(victim)) return;
  const exited = new Promise<void>((resolve) => victim.once('exit', () => resolve()));
  victim.kill(signal);
  await exited;
}

/** One security.changed event per call: the account's API key replaced. */
async function rotateKey(account: TestAccount): Promise<void> {
  const rotated = await request(url, 'POST', '/api/v1/auth/api-key/rotate', { json: {}, headers: { authorization: `Bearer ${account.token}` } });
  assert.is(rotated.status, 200, rotated.text);
}

/** The account an event is about (account.created names it in full, the others by id). */
const accountOfEvent = (event: { data: { account?: { id: number }; account_id?: number } }): number => event.data.account?.id ?? event.data.account_id!;

/** The same, of a request the receiver got. */
const accountOfRequest = (request: { body: string }): number => accountOfEvent(JSON.parse(request.body));

/** Every event the receiver verified and answered 200, by account, in arrival order, each id once. */
function deliveredByAccount(): Map<number, string[]> {
  const byAccount = new Map<number, string[]>();
  for (const event of receiver.delivered()) {
    const accountId = accountOfEvent(event);
    const ids = byAccount.get(accountId) ?? [];
    if (!ids.includes(event.id)) ids.push(event.id);
    byAccount.set(accountId, ids);
  }
  return byAccount;
}

test.before(async () => {
  database = await createTestDatabase();
  smtp = await startSmtpServer();
  receiver = await EventReceiver.start();
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const inherited = { ...process.env } as Record<string, string>;
  delete inherited.DATABASE_URL;
  env = { ...inherited, ...serviceEnv(port, smtp.url), LOG_LEVEL: 'warn', ...database.env };
  // The endpoint, made by the operators' own service function before the service first runs
  // (the embedded database serves one process at a time).
  const deps = await openDeps(loadConfig(env), { logger: createLogger('silent') });
  try {
    const created = await createEndpoint(deps, { accountId: null, request: { ip: '127.0.0.1', requestId: 'test' } }, { url: receiver.url, events: ['account.created', 'security.changed'] });
    receiver.secrets = [created.secret];
  } finally {
    await deps.close();
  }
});

test.after(async () => {
  if (running(child)) await kill('SIGKILL');
  await receiver?.close();
  await smtp?.close();
  await database?.drop();
});

/**
 * On a database server the gateway runs alone, so nothing sends what it commits: the kill
 * falls between commit and send for every event. The embedded database serves one process,
 * which must be the whole service: there the kill follows the last commit at once, and
 * what the sender had not reached yet is what the restart must send.
 */
const committingRole = process.env.DATABASE_URL ? 'gateway' : 'all';

test('SIGKILL between commit and send: the committed events are all sent after a restart, in order per account', async () => {
  await startChild(committingRole);
  accounts = [await createAccount({ url, smtp }, 'first'), await createAccount({ url, smtp }, 'second')];
  for (let i = 0; i < 5; i++) for (const account of accounts) await rotateKey(account);
  await kill('SIGKILL');
  if (committingRole === 'gateway') {
    // Requests for these accounts only: another test's may have come in before this one.
    const forThem = receiver.received.filter((request) => accounts.some((account) => account.id === accountOfRequest(request)));
    assert.is(forThem.length, 0, 'nothing was sent before the kill');
  }

  await startChild('all');
  const byAccount = await eventually('all 12 events delivered', () => {
    const found = deliveredByAccount();
    return accounts.every((account) => found.get(account.id)?.length === 6) ? found : undefined;
  });
  // At least once: an event sent just before the kill, whose answer was not yet recorded, comes again.
  const seen = new Set<string>();
  const inArrivalOrder = receiver.delivered().filter((event) => !seen.has(event.id) && Boolean(seen.add(event.id)));
  for (const account of accounts) {
    const events = inArrivalOrder.filter((event) => byAccount.get(account.id)!.includes(event.id));
    assert.equal(events.map((event) => event.type), ['account.created', ...Array(5).fill('security.changed')], 'in the order they happened');
  }
  assert.ok(receiver.received.every((seen) => !seen.error), 'every request verified');
});

test('SIGKILL mid-send: the requests cut off are sent again with the same webhook-id, and every event arrives', async () => {
  if (!running(child)) await startChild('all');
  // Accounts of its own: the first test's kill may still have an answered but unrecorded
  // delivery of its accounts to send again (at least once), whenever its lease runs out.
  const own = [await createAccount({ url, smtp }, 'third'), await createAccount({ url, smtp }, 'fourth')];
  await eventually('their account.created delivered', () => own.every((account) => deliveredByAccount().get(account.id)?.length === 1));
  receiver.mode = 'hang';
  const seen = receiver.received.length;
  for (let i = 0; i < 3; i++) for (const account of own) await rotateKey(account);
  // Each account's first new event is in flight (the later ones wait behind it, in order).
  const inFlight = () => receiver.received.slice(seen).filter((request) => own.some((account) => account.id === accountOfRequest(request)));
  await eventually('a request in flight for each account', () => own.every((account) => inFlight().some((request) => accountOfRequest(request) === account.id)));
  const cutOff = inFlight().map((request) => request.headers['webhook-id']);
  await kill('SIGKILL');

  receiver.mode = 'ok';
  await startChild('all');
  // The cut-off deliveries are held by their lease (the send timeout and a margin) before they go again.
  const byAccount = await eventually('every event delivered after the restart', () => {
    const found = deliveredByAccount();
    return own.every((account) => found.get(account.id)?.length === 4) ? found : undefined;
  });
  const delivered = new Set([...byAccount.values()].flat());
  for (const id of cutOff) assert.ok(delivered.has(id), `${id}, cut off, arrived later with the same webhook-id`);
  for (const account of own) {
    const ids = byAccount.get(account.id)!.slice(1);
    assert.ok(cutOff.includes(ids[0]), 'the cut-off one first, then the ones that waited');
  }
  await kill('SIGTERM');
});

test.run();
