import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { recordEvent } from '../server/src/modules/activity/index.ts';
import { AUTH, PASSWORD, bearer, registerAdmin, registerAndVerify, type Account } from './helpers/auth.ts';
import { checkedForFaults } from './helpers/faults.ts';
import { FORM_TYPE } from './helpers/pages.ts';
import { scrape, valueOf } from './helpers/prometheus.ts';
import { closedSoon, openSocket, rawRequest } from './helpers/raw-http.ts';
import { request, startTestService, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// What only a socket shows. The rest of the suite reaches its service in process, through the
// Koa app's callback (helpers/service.ts, startTestApp); these tests need a real connection:
// bytes that Node's HTTP parser reads before Koa sees a request, bodies refused while they
// are still arriving, slow senders, connections past the limit, and clients that hang up.

type Context = { service: TestService; owner: Account; admin: Account };
const test = checkedForFaults(suite<Context>('the gateway on a socket: raw heads, bodies cut off, slow senders, hang-ups'));

const METRICS_TOKEN = `metrics-${randomBytes(16).toString('hex')}`;
const EVIL = 'http://evil.example';
const AUDIT = '/api/v1/admin/audit';

test.before(async (context) => {
  context.service = await startTestService({ REQUEST_TIMEOUT: '30s', METRICS_TOKEN });
  context.owner = await registerAndVerify(context.service, 'sockets.owner@example.com');
  context.admin = await registerAdmin(context.service, 'sockets.auditor@example.com');
});
test.after(async ({ service }) => {
  await service?.close();
});

/**
 * A request head with one header value, as a client could send it: text (sent as UTF-8, as
 * the whole head is), or characters U+0000 to U+00FF standing for raw bytes (also sent as
 * UTF-8: 0x85 arrives as C2 85, which is U+0085 however the server reads it).
 */
function headWith(method: string, path: string, header: string, value: Buffer | string, body = ''): string {
  const length = Buffer.byteLength(body);
  const text = typeof value === 'string' ? value : value.toString('latin1');
  return `${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${header}: ${text}\r\n\r\n${body}`;
}

test('a C0 control character in a header value is a 400 with the error body, never a 5xx', async ({ service }) => {
  const header = await rawRequest(service.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Note: a\u0001b\r\n\r\n', undefined);
  assert.is(header.status, 400);
  assert.is(header.body.code, 'VALIDATION_FAILED');
});

test('C1 control characters (U+0080 to U+009F) in any header value are 400, and nothing is stored', async ({ service, owner }) => {
  const sessionsBefore = await service.deps.db.query('SELECT id FROM sessions WHERE account_id = $1', [owner.user.id]);
  const activityBefore = await service.deps.db.query('SELECT id FROM audit_events WHERE account_id = $1', [owner.user.id]);
  const login = JSON.stringify({ email: owner.email, password: PASSWORD });
  for (const byte of [0x80, 0x85, 0x9b, 0x9f]) {
    const agent = Buffer.concat([Buffer.from('Mozilla/5.0 '), Buffer.from([byte]), Buffer.from('evil')]);
    const answer = await rawRequest(service.url, headWith('POST', `${AUTH}/login`, 'User-Agent', agent, login), undefined);
    assert.is(answer.status, 400, `0x${byte.toString(16)}: ${answer.statusLine}`);
    assert.is(answer.body.code, 'VALIDATION_FAILED');
    assert.is(answer.body.message, 'The User-Agent header holds a control character.');
  }
  const nel = Buffer.from([0x61, 0x85, 0x62]);
  for (const [method, path, header] of [
    ['POST', '/trpc/auth.login', 'User-Agent'],
    ['GET', `${AUTH}/me`, 'Authorization'],
    ['POST', '/webhook/payment/site_unknown', 'Stripe-Signature'],
    ['GET', '/login', 'Accept-Language'],
    ['GET', '/healthz', 'X-Note'],
  ] as const) {
    const answer = await rawRequest(service.url, headWith(method, path, header, nel, method === 'POST' ? '{}' : ''), undefined);
    assert.is(answer.status, 400, `${method} ${path}: ${answer.statusLine}`);
  }
  const sessionsAfter = await service.deps.db.query('SELECT id FROM sessions WHERE account_id = $1', [owner.user.id]);
  const activityAfter = await service.deps.db.query('SELECT id FROM audit_events WHERE account_id = $1', [owner.user.id]);
  assert.is(sessionsAfter.length, sessionsBefore.length, 'no session was made');
  assert.is(activityAfter.length, activityBefore.length, 'nothing reached the activity log');
  // Latin-1 letters (0xA0 and above) are not control characters: a header may carry them.
  const latin = await rawRequest(service.url, headWith('GET', '/healthz', 'X-Note', Buffer.from([0x63, 0x61, 0x66, 0xe9])), undefined);
  assert.is(latin.status, 200);
});

test('UTF-8 text in a header is not taken for control characters: a user agent in Japanese signs in and is kept as written', async ({ service, owner }) => {
  // 日 is E6 97 A5 and € is E2 82 AC: read as latin1, 0x97 and 0x82 are C1 controls.
  const agent = 'Mozilla/5.0 (日本語; €) TestApp/1.0';
  const login = JSON.stringify({ email: owner.email, password: PASSWORD });
  const answer = await rawRequest(service.url, headWith('POST', `${AUTH}/login`, 'User-Agent', agent, login), undefined);
  assert.is(answer.status, 200, answer.statusLine);
  const token = answer.body.token as string;
  const listed = await request(service.url, 'GET', `${AUTH}/sessions`, { headers: { authorization: `Bearer ${token}` } });
  assert.is(listed.body.sessions.find((session: { current: boolean }) => session.current).user_agent, agent);
  // A cookie another page of the domain set, holding UTF-8 text, does not get the request refused.
  const cookie = `prefs=言語; svc_token=${token}`;
  assert.is((await rawRequest(service.url, headWith('GET', `${AUTH}/me`, 'Cookie', cookie), undefined)).status, 200);
});

test('/trpc answers a declared-oversized body at once with 413 naming the limit, and closes the connection', async ({ service }) => {
  for (const path of ['/trpc/auth.login', '/trpc/auth.login,auth.register?batch=1']) {
    // No body byte follows the head: the answer can only come from the declared length.
    const answer = await rawRequest(service.url, `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n`, undefined, 5_000);
    assert.is(answer.status, 413, answer.statusLine);
    assert.is(answer.body.code, 'PAYLOAD_TOO_LARGE');
    assert.is(answer.body.message, 'The request body is over the limit of 16 KiB.');
    assert.ok(answer.closed, 'connection closed');
  }
  const streamed = await rawRequest(
    service.url,
    'POST /trpc/auth.login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    { chunk: Buffer.from(`4000\r\n${'a'.repeat(0x4000)}\r\n`), everyMs: 5, upTo: 4 * 1024 * 1024 },
    5_000,
  );
  assert.is(streamed.status, 413);
  assert.ok(streamed.sentBeforeAnswer < 1024 * 1024, `answered after ${streamed.sentBeforeAnswer} bytes`);
});

test('a body over the cap is answered 413 at once and the connection closed, however it is sent', async ({ service }) => {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const webhook = '/webhook/payment/site_unknown';
  const declared = await rawRequest(
    service.url,
    `POST ${webhook} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n`,
    { chunk, everyMs: 50, upTo: 2 * 1024 * 1024 },
  );
  assert.is(declared.status, 413);
  assert.is(declared.body.code, 'PAYLOAD_TOO_LARGE');
  assert.ok(declared.closed, 'connection closed');
  assert.ok(declared.sentBeforeAnswer < 2 * 1024 * 1024, `answered after ${declared.sentBeforeAnswer} bytes, not after the whole body`);

  // A stream that would go on for 64 MiB: answered once past 1 MiB, not when the client stops.
  const streamed = await rawRequest(
    service.url,
    `POST ${webhook} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    { chunk: Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]), everyMs: 5, upTo: 64 * 1024 * 1024 },
  );
  assert.is(streamed.status, 413);
  assert.ok(streamed.closed, 'connection closed');
  assert.ok(streamed.sentBeforeAnswer < 4 * 1024 * 1024, `answered after ${streamed.sentBeforeAnswer} bytes`);

  const rest = await rawRequest(
    service.url,
    `POST ${AUTH}/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${16 * 1024 * 1024}\r\n\r\n`,
    { chunk, everyMs: 50, upTo: 1024 * 1024 },
  );
  assert.is(rest.status, 413);
  assert.ok(rest.closed, 'connection closed');
});

test('a big form from another site is refused at once, unread, and the connection closed', async ({ service }) => {
  const answer = await rawRequest(
    service.url,
    `POST /account/password HTTP/1.1\r\nHost: x\r\nOrigin: ${EVIL}\r\nContent-Type: ${FORM_TYPE}\r\nContent-Length: ${16 * 1024 * 1024}\r\n\r\n`,
    { chunk: Buffer.alloc(64 * 1024, 0x61), everyMs: 50, upTo: 1024 * 1024 },
  );
  assert.is(answer.status, 403);
  assert.ok(answer.closed, 'connection closed');
  assert.ok(answer.sentBeforeAnswer < 1024 * 1024, `answered after ${answer.sentBeforeAnswer} bytes`);
});

test('a request that takes longer than REQUEST_TIMEOUT to arrive is cut off; connections past MAX_CONNECTIONS are closed', async () => {
  const strict = await startTestService({ REQUEST_TIMEOUT: '2s', HEADERS_TIMEOUT: '1s', MAX_CONNECTIONS: '3' });
  try {
    const slow = await rawRequest(
      strict.url,
      `POST ${AUTH}/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`,
      { chunk: Buffer.from(' '), everyMs: 200, upTo: 1000 },
    );
    assert.is(slow.status, 408);
    assert.is(slow.body.code, 'REQUEST_TIMEOUT');
    assert.ok(slow.closed);
    assert.ok(slow.sentBeforeAnswer < 1000, 'cut off before the body was complete');

    const { hostname, port } = new URL(strict.url);
    const held = await Promise.all(Array.from({ length: 3 }, () => openSocket(hostname, Number(port))));
    const extra = await openSocket(hostname, Number(port));
    assert.ok(await closedSoon(extra), 'the fourth connection is closed at once');
    assert.ok(!held.some((socket) => socket.destroyed), 'the first three stay open');
    for (const socket of held) socket.destroy();
  } finally {
    await strict.close();
  }
});

/** http_requests_in_flight on GET /metrics (the scrape counts itself). */
const inFlight = async (service: TestService) => valueOf(await scrape(service.url, METRICS_TOKEN), 'http_requests_in_flight');

test('requests in flight: the scrape itself, and a request whose body is still coming until its client hangs up', async ({ service }) => {
  assert.is(await inFlight(service), 1, 'the scrape alone');
  const { hostname, port } = new URL(service.url);
  const socket = await openSocket(hostname, Number(port));
  socket.on('error', () => {});
  socket.write(`POST ${AUTH}/login HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":`);
  await eventually('the half-sent login to count', async () => (await inFlight(service)) === 2, 10_000);
  socket.destroy();
  await eventually('the login to be done with', async () => (await inFlight(service)) === 1, 10_000);
});

test('a client that goes away mid-stream: the audit export ends on the service, which keeps answering', async ({ service, admin, owner }) => {
  // More events than one page (1000 a statement) holds, so that the answer comes in parts.
  const from = { ip: '198.51.100.9', requestId: 'bulk', userAgent: 'bulk-writer' };
  await service.deps.db.transaction(async (tx) => {
    for (let n = 0; n < 2_500; n += 1) await recordEvent(tx, service.clock, 'login.succeeded', { accountId: owner.user.id }, from, { n });
  });
  const requestId = 'audit-export-abandoned';
  const aborted = new AbortController();
  const response = await fetch(`${service.url}${AUDIT}`, { headers: { ...bearer(admin.token), 'x-request-id': requestId }, signal: aborted.signal });
  assert.is(response.status, 200);
  const reader = response.body!.getReader();
  const first = await reader.read();
  assert.ok(first.value && first.value.length > 0, 'the first page came before the end');
  aborted.abort();
  await reader.read().catch(() => undefined);
  // The access log line is written once the route's handler has returned: it did not hang on a dead socket.
  const ended = () => service.logs.lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'request' && line.requestId === requestId);
  const line = await eventually('the abandoned export ended', ended);
  assert.is(line.route, AUDIT);
  // A hang-up is the client's doing: if Koa reports the failed write, it is not logged as an error (checkedForFaults).
  assert.is((await request(service.url, 'GET', `${AUDIT}?account_id=${owner.user.id}`, { headers: bearer(admin.token) })).status, 200);
});

/** Sessions of `accountId`, read over a connection of the test's own. */
async function sessionCount(database: pg.Client, accountId: number): Promise<number> {
  const { rows } = await database.query('SELECT count(*)::int AS n FROM sessions WHERE account_id = $1', [accountId]);
  return rows[0].n;
}

// Stopping the service closes the server, which waits for connections, not for handlers: a
// request whose client hung up is still being handled after its socket is gone. The
// database must stay open until that handler is done, or its work is cut off halfway.
// Holding a table lock in a second connection needs a database server: the embedded
// database serves one connection at a time.
if (process.env.DATABASE_URL) {
  test('stop waits for a login whose client left, and the login completes before the database closes', async () => {
    const service = await startTestService();
    const database = new pg.Client({ connectionString: service.env.DATABASE_URL });
    const lockHolder = new pg.Client({ connectionString: service.env.DATABASE_URL });
    try {
      await Promise.all([database.connect(), lockHolder.connect()]);
      const account = await registerAndVerify(service, 'hung-up@example.com');
      const sessionsBefore = await sessionCount(database, account.user.id);

      // The login's session insert waits on this lock for as long as the test holds it.
      await lockHolder.query('BEGIN');
      await lockHolder.query('LOCK TABLE sessions IN SHARE MODE');
      const body = JSON.stringify({ email: account.email, password: PASSWORD });
      const login = httpRequest(`${service.url}${AUTH}/login`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } });
      login.on('error', () => {});
      login.end(body);
      await eventually(
        'the login to wait on the lock',
        async () =>
          (await database.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO sessions%'`)).rowCount,
      );

      login.destroy();
      const stopped = service.stop();
      await eventually('the service to say it waits for the request', () => service.logs.text().includes('waiting for requests whose clients hung up'));
      await lockHolder.query('COMMIT');
      await stopped;

      assert.is(await sessionCount(database, account.user.id), sessionsBefore + 1, 'the login made its session');
      const succeeded = await database.query(`SELECT count(*)::int AS n FROM audit_events WHERE account_id = $1 AND event = 'login.succeeded'`, [account.user.id]);
      assert.is(succeeded.rows[0].n, 2, 'and recorded its event');
      const errors = service.logs.lines.filter((line) => JSON.parse(line).level === 'error');
      assert.equal(errors, [], 'nothing failed on the way down');
    } finally {
      await lockHolder.end().catch(() => undefined);
      await database.end().catch(() => undefined);
      await service.close();
    }
  });
}

test.run();
