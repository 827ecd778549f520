/**
 * The service under test, run as its own process by bench/run.ts so that the load generator
 * never shares its event loop: `node --import tsx bench/serve.ts` with DATABASE_URL set.
 * Prints one `ready` JSON line on stdout, then answers commands over IPC until told to stop.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { createGateway } from '../gateway/src/app.ts';
import { startService, type RunningService } from '../gateway/src/server.ts';
import { eventually } from '../tests/helpers/wait.ts';
import { adminService, eventsAdminService, emitEvent, loadConfig, newSigningKey } from '../server/src/index.ts';
import { startBareServer } from './bare.ts';
import { startIngestFloor } from './ingest-floor.ts';
import { measureHashCeiling } from './hash-ceiling.ts';
import { BENCH_AUDIENCE, SERVICE_LOG_LEVEL, type Command, type Reply, type ServiceInfo } from './protocol.ts';
import { seedAccount, seedDownBacklog, seedSite } from './seed.ts';

type CommandHandler = (service: RunningService, args: Record<string, unknown>) => Promise<unknown>;

/** Requests the service has taken and not finished answering (countRequests). */
let requestsInFlight = 0;

/**
 * Counts requests from the moment the service takes one until its handler is done, whether
 * or not the client still waits: autocannon stops at its deadline with every connection's
 * request unanswered, and 50 logins left queued for argon2 keep the hashing thread busy for
 * most of a second after it. (Koa's request handler returns a promise that settles then.)
 */
function countRequests(server: Server): void {
  const handlers = server.listeners('request') as Array<(...args: unknown[]) => unknown>;
  server.removeAllListeners('request');
  server.on('request', (req, res) => {
    requestsInFlight++;
    const done = () => {
      requestsInFlight--;
    };
    Promise.all(handlers.map((handle) => handle(req, res))).then(done, done);
  });
}

/** Work that must run inside the service's process; a new scenario may add its own. */
const COMMANDS: Record<string, CommandHandler> = {
  // Resolves once the service has finished every request it took (see countRequests).
  settle: () => eventually('the requests in flight to finish', () => requestsInFlight === 0, 60_000),
  'hash-ceiling': (service, args) =>
    measureHashCeiling(service.deps.passwords, { concurrency: Number(args.concurrency), durationMs: Number(args.durationMs) }),
  // Accounts of their own for scenarios that change them (a passkey each for the second step).
  'seed-accounts': async (service, args) => Promise.all(Array.from({ length: Number(args.count) }, () => seedAccount(service.deps, service.url!))),
  // Events out: an endpoint for the bench's receiver, then events written through the outbox.
  'events-endpoint': async (service, args) => {
    const actor = { accountId: null, request: { ip: '127.0.0.1', requestId: 'bench' } };
    await eventsAdminService.createEndpoint(service.deps, actor, { url: String(args.url), events: ['security.changed'] });
  },
  // An endpoint whose receiver has been down a while, and what it has waiting (seedDownBacklog).
  'events-down-backlog': async (service, args) => {
    const actor = { accountId: null, request: { ip: '127.0.0.1', requestId: 'bench' } };
    const { endpoint } = await eventsAdminService.createEndpoint(service.deps, actor, { url: 'http://127.0.0.1:9/down', events: ['account.deleted'] });
    await seedDownBacklog(service.deps.db, endpoint.id, Number(args.count), Number(args.accounts));
    // As an outage leaves it: the sender has tried each account's first delivery and set aside
    // what waits behind it (docs/EVENTS.md), which it does as the backlog forms.
    await eventually(
      'the sender to set the backlog aside',
      async () => {
        const [row] = await service.deps.db.query<{ due: string }>(
          `SELECT count(*) AS due FROM event_deliveries WHERE endpoint_id = $1 AND state = 'pending' AND GREATEST(next_attempt_at, held_until) <= now()`,
          [endpoint.id],
        );
        return Number(row.due) === 0;
      },
      120_000,
    );
    return endpoint.id;
  },
  'events-endpoint-delete': async (service, args) => {
    const actor = { accountId: null, request: { ip: '127.0.0.1', requestId: 'bench' } };
    await eventsAdminService.deleteEndpoint(service.deps, actor, String(args.id));
  },
  // In one transaction: the sender sees them all at its commit, and the bench times from there.
  'emit-events': async (service, args) => {
    const count = Number(args.count);
    const accounts = Number(args.accounts);
    await service.deps.db.transaction(async (tx) => {
      for (let n = 0; n < count; n++) {
        await emitEvent(tx, service.deps.clock, { type: 'security.changed', data: { account_id: 1_000_000 + (n % accounts), what: 'api_key' } });
      }
    });
  },
  // Jobs the worker has yet to finish (reset mails of the forgot scenarios, webhook effects):
  // a scenario that measures the worker starts when they are done.
  'jobs-waiting': async (service) => {
    const [row] = await service.deps.db.query<{ waiting: string }>(`SELECT (SELECT count(*) FROM pgboss.job WHERE state IN ('created', 'retry', 'active'))
            + (SELECT count(*) FROM webhook_inbox WHERE state = 'received') AS waiting`);
    return Number(row.waiting);
  },
  // The soak's readings: the process's resident memory, and an operator's replay of the newest delivery.
  memory: async () => process.memoryUsage(),
  // The process's CPU time so far, in microseconds: the fast-path rows count requests per CPU-second.
  'cpu-usage': async () => process.cpuUsage(),
  'replay-newest': async (service, args) => {
    const [row] = await service.deps.db.query<{ id: string }>(
      `SELECT id FROM webhook_inbox WHERE provider = 'payment' AND scope = $1 AND state = 'processed' ORDER BY received_at DESC LIMIT 1`,
      [String(args.siteKey)],
    );
    if (!row) return false;
    await adminService.replayDelivery(service.deps, { accountId: null, request: { ip: '127.0.0.1', requestId: 'soak' } }, row.id);
    return true;
  },
  'inbox-stored': async (service, args) => {
    const [row] = await service.deps.db.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_inbox WHERE provider = 'payment' AND scope = $1`, [String(args.siteKey)]);
    return Number(row.n);
  },
  // Through the index of waiting rows: polled while the worker drains, it costs little however many rows were kept before.
  'inbox-waiting': async (service, args) => {
    const [row] = await service.deps.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM webhook_inbox WHERE state = 'received' AND provider = 'payment' AND scope = $1`,
      [String(args.siteKey)],
    );
    return Number(row.n);
  },
  // The deliveries kept since `since`: how many, the span from the first kept to the last applied, and each one's wait from kept to applied.
  'inbox-applied': async (service, args) => {
    const [row] = await service.deps.db.query<{ n: string; span_ms: number; p50_ms: number; p99_ms: number }>(
      `SELECT count(*) AS n,
              extract(epoch FROM max(processed_at) - min(received_at)) * 1000 AS span_ms,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM processed_at - received_at) * 1000) AS p50_ms,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM processed_at - received_at) * 1000) AS p99_ms
       FROM webhook_inbox WHERE provider = 'payment' AND scope = $1 AND received_at >= $2 AND state = 'processed'`,
      [String(args.siteKey), new Date(String(args.since))],
    );
    return { count: Number(row.n), spanMs: Number(row.span_ms), p50: Number(row.p50_ms), p99: Number(row.p99_ms) };
  },
};

/**
 * Production refuses to start without SMTP_URL: mails (the reset mails of the forgot
 * scenarios) go to a local server that takes and drops them, as a relay would take them.
 */
async function startMailSink(): Promise<{ url: string; close(): Promise<void> }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, done) {
      stream.on('end', () => done());
      stream.resume();
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Production's settings, as an operator would give them: its own secrets, and a key for access tokens (token minting). */
function benchConfig(dataDir: string, smtpUrl: string, accessTokenKey: string) {
  return loadConfig({
    NODE_ENV: 'production',
    SMTP_URL: smtpUrl,
    HOST: '127.0.0.1',
    PORT: '0',
    PUBLIC_URL: 'http://127.0.0.1',
    DATABASE_URL: process.env.DATABASE_URL,
    DATA_DIR: dataDir,
    JWT_SECRET: randomBytes(32).toString('hex'),
    DATA_KEY: randomBytes(32).toString('hex'),
    RATE_LIMITS: 'off',
    // The bench's event receivers listen on this machine: production refuses loopback otherwise.
    EVENTS_ALLOWED_NETWORKS: '127.0.0.0/8',
    LOG_LEVEL: SERVICE_LOG_LEVEL,
    ACCESS_TOKEN_AUDIENCES: BENCH_AUDIENCE,
    ACCESS_TOKEN_KEYS: accessTokenKey,
  });
}

/**
 * The service's gateway built again with FAST_PATHS=off, on its deps (database, caches) and a
 * port of its own: /me there against /me on the service measures the REST fast path alone,
 * in the same process and round.
 */
async function startStockHandler(service: RunningService): Promise<{ url: string; server: Server }> {
  const { deps } = service;
  const gateway = createGateway({ ...deps, config: { ...deps.config, fastPaths: false }, metrics: { ...deps.metrics, readRequestsInFlightFrom: () => {} } });
  const server = createServer(gateway.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  countRequests(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function answerCommands(service: RunningService, stop: () => Promise<void>): void {
  process.on('message', (command: Command) => {
    const handler = COMMANDS[command.name];
    const reply = (message: Reply) => process.send!(message);
    if (!handler) return reply({ id: command.id, ok: false, error: `unknown command ${command.name}` });
    handler(service, command.args).then(
      (value) => reply({ id: command.id, ok: true, value }),
      (error: Error) => reply({ id: command.id, ok: false, error: error.stack ?? String(error) }),
    );
  });
  // The parent going away (normally or not) is the signal to stop.
  process.on('disconnect', () => void stop());
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL || !process.send) throw new Error('bench/serve.ts is started by bench/run.ts (needs DATABASE_URL and IPC)');
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  const mail = await startMailSink();
  const { privateJwk } = await newSigningKey('EdDSA');
  const service = await startService(benchConfig(dataDir, mail.url, JSON.stringify(privateJwk)), 'all');
  countRequests(service.server!);
  const bare = await startBareServer();
  const stockHandler = await startStockHandler(service);
  const account = await seedAccount(service.deps, service.url!);
  const site = await seedSite(service.deps, account);
  const floor = await startIngestFloor(process.env.DATABASE_URL, site.webhookSecret);
  const stop = async () => {
    const closed = new Promise((resolve) => bare.server.close(resolve));
    bare.server.closeIdleConnections();
    await closed;
    const stockClosed = new Promise((resolve) => stockHandler.server.close(resolve));
    stockHandler.server.closeAllConnections();
    await stockClosed;
    await floor.close();
    await service.stop();
    await mail.close();
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  };
  answerCommands(service, stop);
  const info: ServiceInfo = { type: 'ready', url: service.url!, publicUrl: service.deps.config.publicUrl, bareUrl: bare.url, ingestFloorUrl: floor.url, account, site, stockHandlerUrl: stockHandler.url };
  process.stdout.write(`${JSON.stringify(info)}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
