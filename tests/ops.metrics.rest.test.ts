import { randomBytes, randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { QUEUES } from '../server/src/jobs.ts';
import { AUTH_RATE_RULES } from '../server/src/router.ts';
import { AUTH, PASSWORD, assertError, bearer, login, loginFrom, me, registerAndVerify, registerForToken, requestFrom } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { samples, scrape as scrapeAt, valueOf } from './helpers/prometheus.ts';
import { eventually } from './helpers/wait.ts';
import { post, startWithOwner, stripeEvent, stripeHeaders, unixNow } from './helpers/webhook-fixtures.ts';

// GET /metrics (docs/OPERATIONS.md, Metrics): behind METRICS_TOKEN, route labels that are patterns,
// and the counts an operator alerts on.

const TOKEN = `metrics-${randomBytes(16).toString('hex')}`;
const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64url')}`;
const SECOND = 1000;

type Context = { service: TestService; siteKey: string; secrets: Set<string> };
const test = suite<Context>('GET /metrics: Prometheus text behind METRICS_TOKEN');

test.before(async (context) => {
  const { service, caller } = await startWithOwner({ METRICS_TOKEN: TOKEN, RATE_LIMITS: 'on' }, 'metrics');
  context.service = service;
  context.siteKey = (await caller.sites.create({ name: 'Shop', paymentWebhookSecret: WEBHOOK_SECRET })).siteKey;
  context.secrets = new Set([TOKEN, WEBHOOK_SECRET]);
});
test.after(async ({ service }) => {
  await service?.close();
});

/** GET /metrics with the suite's token. */
const scrape = (service: TestService) => scrapeAt(service.url, TOKEN);

const sessionIdOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid as string;

test('without METRICS_TOKEN (the default) there is no /metrics: 404 NOT_FOUND', async () => {
  const plain = await startTestApp();
  try {
    assertError(await request(plain.url, 'GET', '/metrics'), 404, 'NOT_FOUND');
    assertError(await request(plain.url, 'GET', '/metrics', { headers: bearer(TOKEN) }), 404, 'NOT_FOUND');
  } finally {
    await plain.close();
  }
});

test('401 UNAUTHORIZED with WWW-Authenticate: Bearer without the token, with a wrong one, or not as Bearer', async ({ service }) => {
  const attempts: Array<Record<string, string>> = [{}, bearer('wrong-token-of-some-length'), bearer(`${TOKEN}x`), bearer(TOKEN.slice(0, -1)), { authorization: `Basic ${TOKEN}` }, { authorization: TOKEN }];
  for (const headers of attempts) {
    const refused = await request(service.url, 'GET', '/metrics', { headers });
    assertError(refused, 401, 'UNAUTHORIZED');
    assert.is(refused.headers.get('www-authenticate'), 'Bearer');
    assert.not.match(refused.text, TOKEN);
  }
});

test('200 with the token: Prometheus text, every metric of the contract, process metrics included', async ({ service }) => {
  const result = await request(service.url, 'GET', '/metrics', { headers: bearer(TOKEN) });
  assert.is(result.status, 200);
  assert.match(result.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const types = new Map([...result.text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
  const expected: Array<[string, string]> = [
    ['http_requests_total', 'counter'],
    ['http_request_duration_seconds', 'histogram'],
    ['webhook_deliveries_total', 'counter'],
    ['inbox_deliveries', 'gauge'],
    ['inbox_oldest_pending_seconds', 'gauge'],
    ['event_endpoints', 'gauge'],
    ['job_failures_total', 'counter'],
    ['http_requests_in_flight', 'gauge'],
    ['log_lines_dropped_total', 'counter'],
    ['logins_total', 'counter'],
    ['rate_limit_refusals_total', 'counter'],
    ['process_cpu_seconds_total', 'counter'],
    ['process_resident_memory_bytes', 'gauge'],
    ['nodejs_eventloop_lag_seconds', 'gauge'],
  ];
  for (const [name, type] of expected) assert.is(types.get(name), type, name);
  assert.ok(valueOf(result.text, 'process_cpu_seconds_total') > 0);
  // The owner's sign-up went through the gateway before this (and perhaps other tests' too): counted by route pattern.
  assert.ok(valueOf(result.text, 'http_requests_total', { route: '/api/v1/auth/register', method: 'POST', status: '201' }) >= 1);
  assert.ok(valueOf(result.text, 'http_request_duration_seconds_count', { route: '/api/v1/auth/register' }) >= 1);
});

test('route labels are patterns: never an id, a key, a token, a query string or a tRPC batch', async ({ service, secrets }) => {
  const account = await registerAndVerify(service, 'metrics.routes@example.com');
  const before = await scrape(service);
  const second = await login(service, account.email);
  secrets.add(account.apiKey).add(account.token).add(second.body.token).add(account.password);
  const sessionId = sessionIdOf(second.body.token);

  assert.is((await request(service.url, 'DELETE', `${AUTH}/sessions/${sessionId}`, { headers: bearer(account.token) })).status, 200);
  assert.is((await me(service, bearer(account.apiKey))).status, 200);
  assert.is((await request(service.url, 'GET', `${AUTH}/me?token=query-secret-in-the-url`, { headers: bearer(account.apiKey) })).status, 200);
  assert.is((await request(service.url, 'GET', '/verify-email?token=query-secret-in-the-url')).status, 200);
  const batch = await request(service.url, 'GET', `/trpc/auth.me,auth.me?batch=1&input=${encodeURIComponent('{}')}`, { headers: bearer(account.apiKey) });
  assert.is(batch.status, 200, batch.text);
  const unknownId = randomUUID();
  assert.is((await request(service.url, 'GET', `/api/v1/nothing/${unknownId}`)).status, 404);
  assert.is((await request(service.url, 'POST', '/healthz')).status, 405);

  const text = await scrape(service);
  // What this test's own requests added: other tests count on the same routes.
  const added = (name: string, labels: Record<string, string>) => valueOf(text, name, labels) - valueOf(before, name, labels);
  assert.is(added('http_requests_total', { route: '/api/v1/auth/sessions/:id', method: 'DELETE', status: '200' }), 1);
  assert.is(added('http_requests_total', { route: '/api/v1/auth/me', method: 'GET', status: '200' }), 2);
  assert.is(added('http_requests_total', { route: '/verify-email', method: 'GET' }), 1);
  assert.is(added('http_requests_total', { route: '/trpc/:path', method: 'GET', status: '200' }), 1);
  assert.is(added('http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }), 1);
  assert.is(added('http_requests_total', { route: 'unmatched', method: 'POST', status: '405' }), 1);
  assert.is(added('http_request_duration_seconds_count', { route: '/api/v1/auth/sessions/:id', method: 'DELETE', status: '200' }), 1);

  for (const sample of samples(text).filter((s) => s.labels.route !== undefined)) {
    const route = sample.labels.route;
    assert.ok(route === 'unmatched' || /^\/[\w/.:-]*$/.test(route), `route label ${route}`);
    for (const part of ['?', 'auth.me', 'nothing']) assert.not.ok(route.includes(part), `route label ${route}`);
  }
  for (const leak of [sessionId, unknownId, 'query-secret-in-the-url', ...secrets]) {
    assert.not.ok(text.includes(leak), `the metrics contain ${leak.slice(0, 12)}`);
  }
});

test('webhook deliveries by provider and outcome: accepted, duplicate, rejected', async ({ service, siteKey }) => {
  const before = await scrape(service);
  const event = stripeEvent({
    type: 'payment_intent.succeeded',
    created: unixNow(service),
    object: { id: `pi_${randomBytes(8).toString('hex')}`, object: 'payment_intent', amount: 1200, amount_received: 1200, currency: 'eur', status: 'succeeded' },
  });
  const payload = JSON.stringify(event);
  const path = `/webhook/payment/${siteKey}`;
  assert.is((await post(service, path, payload, stripeHeaders(payload, WEBHOOK_SECRET, unixNow(service)))).status, 200);
  assert.is((await post(service, path, payload, stripeHeaders(payload, WEBHOOK_SECRET, unixNow(service)))).status, 200);
  assertError(await post(service, path, payload, stripeHeaders(payload, 'whsec_forged', unixNow(service))), 401, 'INVALID_SIGNATURE');
  assertError(await post(service, '/webhook/payment/site_unknown', payload, stripeHeaders(payload, WEBHOOK_SECRET, unixNow(service))), 404, 'NOT_FOUND');

  const after = await scrape(service);
  const delta = (outcome: string) =>
    valueOf(after, 'webhook_deliveries_total', { provider: 'payment', outcome }) - valueOf(before, 'webhook_deliveries_total', { provider: 'payment', outcome });
  assert.equal({ accepted: delta('accepted'), duplicate: delta('duplicate'), rejected: delta('rejected') }, { accepted: 1, duplicate: 1, rejected: 2 });
  assert.is(valueOf(after, 'http_requests_total', { route: '/webhook/payment/:scope', method: 'POST', status: '200' }), 2);
  assert.not.ok(after.includes(siteKey), 'the site key is not in a label');
});

test('inbox gauges: rows by provider and state from one query, cached 5 s on the service clock; oldest pending age', async ({ service }) => {
  const { db } = service.deps;
  // The delivery above is applied by the worker; the gauges are compared once nothing moves.
  await eventually('no delivery waiting', async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_inbox WHERE state = 'received'`))[0].n === 0);
  const now = service.clock.now();
  const insert = (provider: string, state: string, receivedAt: Date, enqueuedAt: Date | null = null) =>
    db.query(
      `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at, state, enqueued_at) VALUES ($1, $2, '', $3, $4, $5, $6, $7)`,
      [randomUUID(), provider, randomUUID(), Buffer.from('{}'), receivedAt, state, enqueuedAt],
    );
  await insert('billing', 'dead', now);
  await insert('billing', 'dead', now);
  await insert('billing', 'ignored', now);
  await insert('payment', 'processed', now);
  // Still waiting, 90 s old; enqueued "tomorrow", so neither the dispatcher nor the sweeper takes it.
  await insert('messengertwo', 'received', new Date(now.getTime() - 90 * SECOND), new Date(now.getTime() + 86_400 * SECOND));

  // Count the statements the gauges send: one per scrape once the cache has run out, none before.
  let reads = 0;
  const query = db.query.bind(db);
  db.query = ((...args: Parameters<typeof db.query>) => {
    // countByProviderAndState's statement (webhooks/inbox/repo.ts), not this test's own count below.
    if (String(typeof args[0] === 'string' ? args[0] : args[0].text).includes('oldest_received')) reads++;
    return query(...args);
  }) as typeof db.query;
  try {
    service.clock.advance(6 * SECOND);
    const text = await scrape(service);
    assert.is(reads, 1, 'one query for both gauges');
    const rows = await db.query<{ provider: string; state: string; n: number }>('SELECT provider, state, count(*)::int AS n FROM webhook_inbox GROUP BY provider, state');
    for (const provider of ['billing', 'payment', 'operator', 'messengerone', 'messengertwo']) {
      for (const state of ['received', 'processed', 'ignored', 'dead']) {
        const expected = rows.find((row) => row.provider === provider && row.state === state)?.n ?? 0;
        assert.is(valueOf(text, 'inbox_deliveries', { provider, state }), expected, `${provider} ${state}`);
      }
    }
    assert.is(valueOf(text, 'inbox_deliveries', { provider: 'billing', state: 'dead' }), 2);
    assert.ok(valueOf(text, 'inbox_deliveries', { provider: 'payment', state: 'processed' }) >= 1);
    assert.is(valueOf(text, 'inbox_oldest_pending_seconds', { provider: 'messengertwo' }), 96);
    assert.is(valueOf(text, 'inbox_oldest_pending_seconds', { provider: 'payment' }), 0);

    await insert('billing', 'dead', service.clock.now());
    service.clock.advance(4 * SECOND);
    const cached = await scrape(service);
    assert.is(reads, 1, 'within 5 s the counts come from the cache');
    assert.is(valueOf(cached, 'inbox_deliveries', { provider: 'billing', state: 'dead' }), 2);
    assert.is(valueOf(cached, 'inbox_oldest_pending_seconds', { provider: 'messengertwo' }), 100, 'the age follows the clock');

    service.clock.advance(1 * SECOND);
    const fresh = await scrape(service);
    assert.is(reads, 2);
    assert.is(valueOf(fresh, 'inbox_deliveries', { provider: 'billing', state: 'dead' }), 3);
  } finally {
    db.query = query;
  }
});

test('logins by outcome: succeeded, failed (wrong password or unknown address), unverified, locked, rate_limited', async ({ service, secrets }) => {
  const account = await registerAndVerify(service, 'metrics.logins@example.com');
  secrets.add(account.apiKey).add(account.token);
  await registerForToken(service, 'metrics.unverified@example.com');
  const before = await scrape(service);

  assert.is((await loginFrom(service, '127.0.80.1', account.email, account.password)).status, 200);
  assert.is((await loginFrom(service, '127.0.80.1', account.email, 'not the password')).status, 401);
  assert.is((await loginFrom(service, '127.0.80.1', 'nobody.here@example.com', PASSWORD)).status, 401);
  assert.is((await loginFrom(service, '127.0.80.1', 'metrics.unverified@example.com', PASSWORD)).status, 403);
  // The account-wide cap, run down through the limiter itself rather than 100 argon2 checks.
  for (let i = 0; i < AUTH_RATE_RULES.failedLoginsPerAccount.limit; i++) {
    await service.deps.rateLimiter.hit([{ rule: AUTH_RATE_RULES.failedLoginsPerAccount, key: account.email }]);
  }
  assertError(await loginFrom(service, '127.0.80.2', account.email, account.password), 429, 'RATE_LIMITED');

  const after = await scrape(service);
  const delta = (outcome: string) => valueOf(after, 'logins_total', { outcome }) - valueOf(before, 'logins_total', { outcome });
  assert.equal(
    { succeeded: delta('succeeded'), failed: delta('failed'), unverified: delta('unverified'), locked: delta('locked'), rate_limited: delta('rate_limited') },
    { succeeded: 1, failed: 2, unverified: 1, locked: 1, rate_limited: 0 },
  );
  assert.is(valueOf(after, 'rate_limit_refusals_total', { rule: 'login-failed' }) - valueOf(before, 'rate_limit_refusals_total', { rule: 'login-failed' }), 1);
});

test('rate-limit refusals by rule name: a client over login-account-ip is rate_limited; resend-address too', async ({ service }) => {
  const account = await registerAndVerify(service, 'metrics.limited@example.com');
  const before = await scrape(service);
  const rule = AUTH_RATE_RULES.loginPerAccountIp;
  for (let i = 0; i < rule.limit; i++) assert.is((await loginFrom(service, '127.0.81.1', account.email)).status, 401);
  assertError(await loginFrom(service, '127.0.81.1', account.email, account.password), 429, 'RATE_LIMITED');
  for (let i = 0; i < AUTH_RATE_RULES.resendPerAddress.limit; i++) {
    assert.is((await requestFrom('127.0.81.2', service.url, 'POST', `${AUTH}/resend-verification`, { json: { email: 'metrics.resend@example.com' } })).status, 200);
  }
  assertError(await requestFrom('127.0.81.2', service.url, 'POST', `${AUTH}/resend-verification`, { json: { email: 'metrics.resend@example.com' } }), 429, 'RATE_LIMITED');

  const after = await scrape(service);
  const refusals = (name: string) => valueOf(after, 'rate_limit_refusals_total', { rule: name }) - valueOf(before, 'rate_limit_refusals_total', { rule: name });
  assert.is(refusals('login-account-ip'), 1);
  assert.is(refusals('resend-address'), 1);
  assert.is(refusals('login-ip'), 0);
  const logins = (outcome: string) => valueOf(after, 'logins_total', { outcome }) - valueOf(before, 'logins_total', { outcome });
  assert.equal({ failed: logins('failed'), rate_limited: logins('rate_limited') }, { failed: rule.limit, rate_limited: 1 });
  const limitedAnswers = (text: string) => valueOf(text, 'http_requests_total', { route: '/api/v1/auth/login', method: 'POST', status: '429' });
  assert.is(limitedAnswers(after) - limitedAnswers(before), 1);
  assert.not.ok(after.includes('127.0.81'), 'a limit key is not a label');
});

test('job failures by queue', async ({ service }) => {
  const before = await scrape(service);
  const failures = (text: string) => valueOf(text, 'job_failures_total', { queue: QUEUES.webhook });
  // An inbox row whose payload its provider cannot parse: the job fails and is retried.
  const id = randomUUID();
  await service.deps.db.query(
    `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at) VALUES ($1, 'billing', '', $2, $3, $4)`,
    [id, randomUUID(), Buffer.from('not json'), service.clock.now()],
  );
  await eventually('the job failed once', async () => {
    return failures(await scrape(service)) > failures(before);
  });
  // Its retries would keep it waiting for a while: gone, its next try finds nothing to do (lockReceivedEntry).
  await service.deps.db.query('DELETE FROM webhook_inbox WHERE id = $1', [id]);
});

test('no token, key, password or site key anywhere in the metrics', async ({ service, siteKey, secrets }) => {
  const account = await registerAndVerify(service, 'metrics.secrets@example.com');
  const second = await login(service, account.email);
  await me(service, bearer(second.body.token));
  secrets.add(account.apiKey).add(account.token).add(second.body.token).add(account.password);
  const text = await scrape(service);
  assert.ok(secrets.size >= 6);
  for (const secret of [...secrets, siteKey]) assert.not.ok(text.includes(secret), `the metrics contain ${secret.slice(0, 12)}…`);
});

test.run();
