import type { BenchContext } from './context.ts';
import type { LoadOptions } from './load.ts';
import type { Measurement } from './measurement.ts';
import { BASELINE, fastPathBuys, p99AtMostTimes, p99Below, rateAbove, rateAlike, rateAtLeast, type Target } from './targets.ts';
import { loginWithSecondStep } from './login-mfa.ts';
import { BENCH_AUDIENCE } from './protocol.ts';
import { eventsOut, eventsOutBesideDown } from './events-out.ts';
import { EFFECTS_DELIVERIES, webhookEffects, webhookIngest, webhookIngestCeiling, webhookIngestFloor, webhookIngestGrouped } from './webhook-ingest.ts';

export const CONNECTIONS = 50;
export const LOGIN_CONNECTIONS = 20;
/** Logins start first, so that argon2 is busy before /me is measured. */
const LOGIN_HEAD_START_SECONDS = 0.5;

export type Scenario = {
  /** Key other scenarios' targets and ratios refer to. */
  id: string;
  label: string;
  unit: string;
  run(bench: BenchContext): Promise<Measurement>;
  /**
   * Scenarios sampled again just before and just after each round of this one; its ratios
   * and targets use the mean of those samples (others use their own run's figures).
   * Default: the bare handler.
   */
  references?: string[];
  targets?: Target[];
};

export const referencesOf = (scenario: Scenario) => scenario.references ?? (scenario.id === BASELINE ? [] : [BASELINE]);

const ME = '/api/v1/auth/me';

function loginLoad(bench: BenchContext, extra: Partial<LoadOptions> = {}) {
  const { url, account } = bench.service.info;
  return bench.load({
    url: `${url}/api/v1/auth/login`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: account.email, password: account.password }),
    ...extra,
  });
}

const meWith = (headers: (bench: BenchContext) => Record<string, string>) => (bench: BenchContext) =>
  bench.load({ url: `${bench.service.info.url}${ME}`, headers: headers(bench) });

/**
 * `/me` by API key at `url` (the service's gateway, or the same service's gateway built with
 * FAST_PATHS=off), counted per CPU-second of the service's process instead of per second:
 * what a fast path buys is CPU, and on a machine that other work shares, the CPU time a
 * process used moves far less from one round to the next than the rate it reached. (Its idle
 * work, the worker's polling, counts too: a few milliseconds in a round.)
 */
async function mePerCpuSecond(bench: BenchContext, url: string): Promise<Measurement> {
  const before = await bench.service.command<NodeJS.CpuUsage>('cpu-usage');
  const measured = await bench.load({ url: `${url}${ME}`, headers: bearerApiKey(bench) });
  const after = await bench.service.command<NodeJS.CpuUsage>('cpu-usage');
  const cpuSeconds = (after.user - before.user + after.system - before.system) / 1e6;
  return { ...measured, rate: measured.count / cpuSeconds };
}

const bearerJwt = (bench: BenchContext) => ({ authorization: `Bearer ${bench.service.info.account.token}` });
const bearerApiKey = (bench: BenchContext) => ({ authorization: `Bearer ${bench.service.info.account.apiKey}` });

/** Access tokens minted back to back by one credential: what a frontend's calls to the platform's services cost here. */
const mintWith = (headers: (bench: BenchContext) => Record<string, string>) => (bench: BenchContext) =>
  bench.load({
    url: `${bench.service.info.url}/api/v1/auth/token`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers(bench) },
    body: JSON.stringify({ audience: BENCH_AUDIENCE }),
  });

/** /me while LOGIN_CONNECTIONS logins hash passwords back to back the whole time. */
async function meUnderLogins(bench: BenchContext): Promise<Measurement> {
  const loginSeconds = LOGIN_HEAD_START_SECONDS + bench.warmupSeconds + bench.durationSeconds + 0.5;
  const logins = loginLoad(bench, { connections: LOGIN_CONNECTIONS, durationSeconds: loginSeconds, warmupSeconds: 0 });
  await new Promise((resolve) => setTimeout(resolve, LOGIN_HEAD_START_SECONDS * 1000));
  const me = await meWith(bearerJwt)(bench);
  await logins;
  return me;
}

/** Password-reset requests for `email`: a known address gets a token and a mail, an unknown one nothing. */
const forgotFor = (email: (bench: BenchContext) => string) => (bench: BenchContext) =>
  bench.load({
    url: `${bench.service.info.url}/api/v1/auth/password/forgot`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: email(bench) }),
  });

/**
 * Run in this order. The forgot scenarios come last: each leaves thousands of reset mails for
 * the worker, which would still be sending them through the scenarios after.
 */
export const SCENARIOS: Scenario[] = [
  {
    id: BASELINE,
    label: 'bare Koa JSON handler (baseline)',
    unit: 'req/s',
    run: (bench) => bench.load({ url: bench.service.info.bareUrl }),
  },
  {
    id: 'me-api-key',
    label: 'GET /me, API key',
    unit: 'req/s',
    run: meWith(bearerApiKey),
    targets: [rateAtLeast(BASELINE, 0.35), p99Below(20)],
  },
  // What the fast path buys (gateway/src/fast-paths/): /me by API key with it and without it,
  // per CPU-second of the service. A fast path must buy at least 10% or go (issue 43).
  {
    id: 'me-api-key-cpu',
    label: 'GET /me, API key, per CPU-second of the service',
    unit: 'req/CPU-s',
    run: (bench) => mePerCpuSecond(bench, bench.service.info.url),
    references: [],
  },
  {
    id: 'me-api-key-stock-handler',
    label: "GET /me, API key, per CPU-second, FAST_PATHS=off (trpc-to-openapi's own REST handler)",
    unit: 'req/CPU-s',
    run: (bench) => mePerCpuSecond(bench, bench.service.info.stockHandlerUrl),
    references: ['me-api-key-cpu'],
    targets: [fastPathBuys('me-api-key-cpu', 0.1)],
  },
  {
    id: 'me-jwt',
    label: 'GET /me, JWT (Bearer)',
    unit: 'req/s',
    run: meWith(bearerJwt),
    targets: [rateAtLeast(BASELINE, 0.35), p99Below(20)],
  },
  {
    id: 'me-cookie',
    label: 'GET /me, cookie',
    unit: 'req/s',
    run: meWith((bench) => ({ cookie: `svc_token=${bench.service.info.account.token}` })),
    targets: [rateAtLeast(BASELINE, 0.35), p99Below(20)],
  },
  {
    id: 'token-mint-jwt',
    label: 'token mint by JWT: POST /auth/token, Bearer JWT (an EdDSA access token)',
    unit: 'req/s',
    run: mintWith(bearerJwt),
    // Sampled right before and after each round: /me by the same credential.
    references: ['me-jwt'],
    targets: [rateAtLeast('me-jwt', 0.4)],
  },
  {
    id: 'token-mint-api-key',
    label: 'token mint by API key: POST /auth/token, Bearer API key',
    unit: 'req/s',
    run: mintWith(bearerApiKey),
    references: ['me-api-key'],
    targets: [rateAtLeast('me-api-key', 0.4)],
  },
  {
    id: 'hash-ceiling',
    label: 'argon2 verify ceiling (service hasher, 50 callers)',
    unit: 'verify/s',
    run: (bench) =>
      bench.service.command<Measurement>('hash-ceiling', { concurrency: CONNECTIONS, durationMs: bench.durationSeconds * 1000 }),
    references: [],
  },
  {
    id: 'login',
    label: 'POST /login',
    unit: 'req/s',
    run: (bench) => loginLoad(bench),
    references: ['hash-ceiling'],
    targets: [rateAtLeast('hash-ceiling', 0.9)],
  },
  {
    id: 'login-mfa',
    label: `POST /login, then /login/mfa with a passkey (${LOGIN_CONNECTIONS} accounts)`,
    unit: 'sign-ins/s',
    run: loginWithSecondStep(LOGIN_CONNECTIONS),
    // The password step is the same argon2 work as a login; the second step should add little to it.
    references: ['hash-ceiling', 'login'],
    targets: [rateAtLeast('hash-ceiling', 0.6)],
  },
  {
    id: 'me-under-logins',
    label: `GET /me, JWT, with ${LOGIN_CONNECTIONS} concurrent logins`,
    unit: 'req/s',
    run: meUnderLogins,
    references: ['me-jwt'],
    targets: [p99AtMostTimes('me-jwt', 2)],
  },
  {
    id: 'ingest-floor',
    label: 'hand-written receiver (node:http, verify, one INSERT per delivery): ingest reference',
    unit: 'events/s',
    run: webhookIngestFloor,
    references: [],
  },
  {
    id: 'ingest-grouped',
    label: "our own receiver without a framework (node:http, verify, parse, the inbox's writer into a copy of its table): what storing our way reaches here",
    unit: 'events/s',
    run: webhookIngestGrouped,
    references: ['ingest-floor'],
  },
  {
    id: 'ingest-ceiling',
    label: 'the same receiver storing nothing (node:http, verify, parse, 200): the most any ingest reaches here',
    unit: 'events/s',
    run: webhookIngestCeiling,
    references: ['ingest-floor'],
  },
  {
    id: 'webhook-ingest',
    label: 'POST /webhook/payment/{siteKey}, signed, committed before the 200',
    unit: 'events/s',
    run: webhookIngest,
    // Sampled before and after each round: the bare handler (what any answer costs), the
    // hand-written receiver (what the framework and the inbox's guarantees cost beyond
    // verify + INSERT), our own receiver without the framework (what Koa, the middleware and
    // the worker beside it cost: the same writer and table), and that receiver storing
    // nothing (the ceiling: where it is under 3x the receiver, so is every ingest).
    references: [BASELINE, 'ingest-floor', 'ingest-grouped', 'ingest-ceiling'],
    targets: [rateAtLeast(BASELINE, 0.1), rateAtLeast('ingest-floor', 3), p99Below(50)],
  },
  {
    id: 'webhook-effects',
    label: `webhook effects: a burst of ${EFFECTS_DELIVERIES.toLocaleString('en-US')} signed deliveries (each a new payment and an event), first kept to last applied; p50/p99 from 200 to applied`,
    unit: 'deliveries/s',
    run: webhookEffects,
  },
  {
    id: 'events-out',
    label: 'events out: written through the outbox, signed and sent to a receiver answering at once',
    unit: 'events/s',
    run: eventsOut,
    targets: [rateAbove(1000)],
  },
  {
    id: 'events-out-beside-down',
    label: 'events out as above, beside an endpoint that is down with 20,000 deliveries waiting over 100 accounts',
    unit: 'events/s',
    run: eventsOutBesideDown,
    // Sampled right before and after each round: the same events with no endpoint down.
    references: ['events-out'],
    targets: [rateAtLeast('events-out', 0.8)],
  },
  {
    id: 'forgot-known',
    label: 'POST /password/forgot, known address',
    unit: 'req/s',
    run: forgotFor((bench) => bench.service.info.account.email),
  },
  {
    id: 'forgot-unknown',
    label: 'POST /password/forgot, unknown address',
    unit: 'req/s',
    run: forgotFor(() => 'nobody-at-all@example.com'),
    // Sampled right before each round, so the two are compared under the same load.
    references: ['forgot-known'],
    targets: [rateAlike('forgot-known', 0.8)],
  },
];
