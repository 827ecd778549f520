import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import inject from 'light-my-request';
import { loadConfig } from '../../server/src/config.ts';
import { TestClock } from '../../server/src/lib/clock.ts';
import { createLogger } from '../../server/src/lib/logger.ts';
import type { PasswordCost } from '../../server/src/lib/passwords.ts';
import type { Resolver } from '../../server/src/lib/resolver.ts';
import { startService, type Role, type RunningService } from '../../gateway/src/server.ts';
import { recordAnswer } from './answers.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { refuseUndeclaredError } from './declared-errors.ts';
import { startSmtpServer, type SmtpServer } from './smtp.ts';

/** Whether a TCP port on 127.0.0.1 can be bound now. */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** The first port of the kernel's ephemeral range: what a bind to port 0, or a client's connection, is handed. */
function ephemeralStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

/**
 * The ports this process draws from: those from 10000 to the kernel's ephemeral range, or,
 * where the runner runs several test processes at once (tests/run.mjs gives each its slot
 * as `GATEHOUSE_TEST_PORT_SLOT=<slot>/<slots>`), this process's share of them.
 */
function portRange(): { from: number; to: number } {
  const below = ephemeralStart();
  const [slot, slots] = (process.env.GATEHOUSE_TEST_PORT_SLOT ?? '').split('/').map(Number);
  const shared = Number.isInteger(slot) && Number.isInteger(slots) && slot >= 0 && slot < slots;
  const size = Math.max(1, Math.floor((below - 10_000) / (shared ? slots : 1)));
  const from = 10_000 + (shared ? slot * size : 0);
  return { from, to: from + size };
}

/** Ports this process has handed out: a test may not bind its own until its service has started. */
const handedOut = new Set<number>();

/**
 * A port for a service a test starts as a process, free now, and never handed out before in
 * this process. Below the kernel's ephemeral range, at random: a port that a bind to port 0
 * was handed and gave back could be handed again, to another test's server or to a client's
 * connection, before the service binds it, and then `/readyz` on it answers for someone else.
 * A service binds its port only once its database is ready, seconds later; within this
 * process's share of the range (portRange), no test running at the same time draws it then.
 */
export async function freePort(): Promise<number> {
  const { from, to } = portRange();
  for (let tries = 0; tries < 100; tries++) {
    const port = from + randomInt(to - from);
    if (handedOut.has(port) || !(await canBind(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port found between ${from} and ${to}`);
}

/** Every log line the service writes, kept so tests can assert that no secret is in them. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  _write(chunk: Buffer, _encoding: string, callback: () => void) {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    callback();
  }
  text(): string {
    return this.lines.join('\n');
  }
}

/** A test service's configuration: loopback on `port`, mail to `smtpUrl`, fresh secrets, no rate limits. */
export function serviceEnv(port: number, smtpUrl: string): Record<string, string> {
  return {
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    SMTP_URL: smtpUrl,
    JWT_SECRET: randomBytes(32).toString('hex'),
    DATA_KEY: randomBytes(32).toString('hex'),
    RATE_LIMITS: 'off',
  };
}

export type TestService = RunningService & {
  url: string;
  clock: TestClock;
  smtp: SmtpServer;
  logs: LogCapture;
  env: Record<string, string>;
  /**
   * Stops this instance and starts the same deployment again (its database, mail server and
   * port) with `changes` to its configuration, as an operator's restart would; the returned
   * instance owns the database from then on.
   */
  restart(changes: Record<string, string>): Promise<TestService>;
  close(): Promise<void>;
};

/** What a second instance of the same deployment shares with the first (PostgreSQL only). */
function sameDeployment(first: TestService): TestDatabase {
  const { DATABASE_URL, JWT_SECRET, DATA_KEY, PUBLIC_URL } = first.env;
  if (!DATABASE_URL) throw new Error('two instances need a database server: set DATABASE_URL');
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
  return {
    // Tokens name PUBLIC_URL as their issuer, so both instances must agree on it.
    env: { DATA_DIR: dataDir, DATABASE_URL, JWT_SECRET, DATA_KEY, PUBLIC_URL },
    drop: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

/**
 * argon2 at about a fortieth of its real cost (PASSWORD_COST) in the in-process services. A
 * run hashes and verifies thousands of passwords: at the real cost the run on PostgreSQL
 * took a fifth longer (175 s against 141 s on one machine). Hashes carry their parameters,
 * so every check works the same. Suites about the cost itself (the stored parameters, what
 * a login's timing shows) start with `realPasswordCost`; services started as processes
 * always hash at the real cost.
 */
const TEST_PASSWORD_COST: PasswordCost = { memoryCost: 1024, timeCost: 1 };

/** What a suite may ask of its service besides its configuration. */
export type ServiceOptions = {
  /** Another instance of that service's deployment: its database, secrets and public URL; the first one drops the database when it closes. */
  joining?: TestService;
  /** argon2 at its real cost (TEST_PASSWORD_COST). */
  realPasswordCost?: boolean;
  /** 'gateway' starts it without its worker (nothing applies what it keeps). */
  role?: Role;
  /** Answers for host names instead of the system (helpers/resolver.ts). */
  resolver?: Resolver;
  /** startTestApp's origin, when a suite must name it before the service starts (inProcessOrigin()). */
  origin?: string;
};

/**
 * The whole service (gateway and worker) in-process on a real port, a fresh database,
 * a real SMTP server and a test clock, for suites where the socket is the point: a
 * browser, bytes Node must parse, connections, timeouts. `env` overrides configuration per
 * suite. Everything else starts it with startTestApp.
 */
export async function startTestService(env: Record<string, string> = {}, options: ServiceOptions = {}): Promise<TestService> {
  return startWith(await freePort(), undefined, env, options);
}

/** Handlers served in process (startTestApp's services and serveInProcess's), by the origin a test's URLs name. */
const inProcess = new Map<string, RequestListener>();
let originsHandedOut = 0;

/** A fresh origin of this process's, reached only through testFetch and request(). */
export function inProcessOrigin(): string {
  return `http://gatehouse-${process.pid}-${++originsHandedOut}.test`;
}

/** The host names inProcessOrigin hands out: no resolver knows them. */
const IN_PROCESS_HOST = /^gatehouse-\d+-\d+\.test$/;

/** Whether `url` names a handler served in process (no port to connect to). */
function isInProcess(url: string): boolean {
  return inProcess.has(new URL(url).origin);
}

/** `handler` served in process under an origin of its own until `close()`: for a second gateway beside a test's service. */
export function serveInProcess(handler: RequestListener): { url: string; close(): void } {
  const url = inProcessOrigin();
  inProcess.set(url, handler);
  return { url, close: () => inProcess.delete(url) };
}

/**
 * The same service, database, mail server and clock as startTestService, on no port: its
 * `url` names an origin of its own (also its PUBLIC_URL) that request(), testFetch and the
 * helpers built on them hand to its Koa callback in process (light-my-request), as a client
 * on 127.0.0.1 would send it. For every suite where the socket is not the point.
 */
export async function startTestApp(env: Record<string, string> = {}, options: ServiceOptions = {}): Promise<TestService> {
  return startWith(0, options.origin ?? inProcessOrigin(), env, options);
}

/** On `port`, or, given `origin`, on none (PORT is then never bound). */
async function startWith(port: number, origin: string | undefined, env: Record<string, string>, options: ServiceOptions): Promise<TestService> {
  const database = options.joining ? sameDeployment(options.joining) : await createTestDatabase({ migrated: true });
  const smtp = await startSmtpServer();
  const publicUrl: Record<string, string> = origin ? { PUBLIC_URL: origin } : {};
  const fullEnv: Record<string, string> = { ...serviceEnv(port, smtp.url), ...publicUrl, LOG_LEVEL: 'debug', ...database.env, ...env };
  const passwordCost = options.realPasswordCost ? undefined : TEST_PASSWORD_COST;
  return startOn(fullEnv, database, smtp, { passwordCost, resolver: options.resolver }, options.role ?? 'all', origin);
}

/**
 * Starts the service on `fullEnv`: on its port, or, given `origin`, on none, its callback
 * served in process under that origin until it stops.
 */
async function startOn(
  fullEnv: Record<string, string>,
  database: TestDatabase,
  smtp: SmtpServer,
  overrides: { passwordCost: PasswordCost | undefined; resolver: Resolver | undefined },
  role: Role,
  origin?: string,
): Promise<TestService> {
  const clock = new TestClock();
  const logs = new LogCapture();
  const config = loadConfig(fullEnv);
  const service = await startService(config, role, { clock, logger: createLogger(config.logLevel, logs), ...overrides }, { listen: !origin });
  if (origin && service.handler) inProcess.set(origin, service.handler);
  const stop = async () => {
    await service.stop();
    if (origin && inProcess.get(origin) === service.handler) inProcess.delete(origin);
  };
  return {
    ...service,
    url: origin ?? service.url!,
    stop,
    clock,
    smtp,
    logs,
    env: fullEnv,
    async restart(changes) {
      await stop();
      return startOn({ ...fullEnv, ...changes }, database, smtp, overrides, role, origin);
    },
    async close() {
      await stop();
      await smtp.close();
      await database.drop();
    },
  };
}

/** Statuses whose answers have no body, which `new Response` refuses one for. */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * fetch for tests: to a handler served in process (startTestApp), through it with no socket,
 * from `remoteAddress`, with the headers Node's fetch sends by default; to anything else,
 * Node's fetch (which cannot choose its address).
 */
function fetchFrom(remoteAddress: string): typeof fetch {
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const handler = inProcess.get(url.origin);
    if (!handler && IN_PROCESS_HOST.test(url.hostname)) throw new Error(`${url.origin} was served in process and has stopped`);
    if (!handler) return networkFetch(input, init);
    if (input instanceof Request) throw new Error('testFetch takes a URL and init for an in-process service, not a Request');
    const headers: Record<string, string> = {
      accept: '*/*',
      'accept-language': '*',
      'sec-fetch-mode': 'cors',
      'user-agent': 'node',
      ...Object.fromEntries(new Headers(init.headers)),
      host: url.host,
    };
    const answer = await inject(handler, {
      method: (init.method ?? 'GET') as inject.InjectOptions['method'],
      url: url.pathname + url.search,
      headers,
      remoteAddress,
      ...(init.body == null ? {} : { payload: payloadOf(init.body) }),
    });
    const answerHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const one of [value].flat()) if (one !== undefined) answerHeaders.append(name, String(one));
    }
    const noBody = NO_BODY.has(answer.statusCode) || init.method?.toUpperCase() === 'HEAD';
    return new Response(noBody ? null : new Uint8Array(answer.rawPayload), { status: answer.statusCode, statusText: answer.statusMessage, headers: answerHeaders });
  };
}

/** A fetch body as light-my-request takes it: text, bytes, or a stream (sent chunked, with no length). */
function payloadOf(body: BodyInit): string | Buffer | Readable {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ReadableStream) return Readable.fromWeb(body as import('node:stream/web').ReadableStream);
  throw new Error('testFetch sends text, bytes or a stream to an in-process service');
}

/** Node's own fetch, whatever withGlobalTestFetch has put in its place. */
const networkFetch = globalThis.fetch;

/** fetchFrom a client on 127.0.0.1: what every suite's requests go through. */
export const testFetch = fetchFrom('127.0.0.1');

/**
 * Runs `body` with the global fetch reaching in-process services too, then puts Node's back:
 * for code that takes no fetch of its own (a guide's example, run as written).
 */
export async function withGlobalTestFetch<T>(body: () => Promise<T>): Promise<T> {
  globalThis.fetch = testFetch;
  try {
    return await body();
  } finally {
    globalThis.fetch = networkFetch;
  }
}

export type HttpResult = { status: number; headers: Headers; body: any; text: string };

/**
 * fetch with the body parsed when it is JSON. An error code that the route does not declare
 * (helpers/declared-errors.ts) fails the test that got it; `notGateway` is for a server that
 * serves no REST route (a worker's health port), whose answers are no route's. `from` is the
 * client's address, for a service in process.
 */
export async function request(
  base: string,
  method: string,
  path: string,
  options: { json?: unknown; body?: string | Buffer; headers?: Record<string, string>; notGateway?: boolean; from?: string } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Buffer | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  if (options.from && !isInProcess(base)) throw new Error('request() chooses the client address of a service in process only (startTestApp)');
  const send = options.from ? fetchFrom(options.from) : testFetch;
  const response = await send(base + path, { method, headers, body: body as BodyInit | undefined, redirect: 'manual' });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const result = { status: response.status, headers: response.headers, body: parsed, text };
  recordAnswer(method, path, body instanceof Buffer ? body.toString('utf8') : body, result);
  if (!options.notGateway) refuseUndeclaredError(method, path, result);
  return result;
}
