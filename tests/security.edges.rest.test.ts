import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, registerAndVerify, type Account } from './helpers/auth.ts';
import { rawRequest } from './helpers/raw-http.ts';
import { checkedForFaults } from './helpers/faults.ts';
import { request, startTestService, type TestService } from './helpers/service.ts';

// Two findings of the review over raw HTTP: /trpc waited for a declared-oversized body until
// the request timeout, and C1 control characters in header values reached sessions and the
// activity log.

type Context = { service: TestService; owner: Account };
const test = checkedForFaults(suite<Context>('edges of the request: declared sizes on /trpc, control characters in header values'));

test.before(async (context) => {
  context.service = await startTestService({ REQUEST_TIMEOUT: '30s' });
  context.owner = await registerAndVerify(context.service, 'edges.owner@example.com');
});
test.after(async ({ service }) => {
  await service?.close();
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

test('a JSON body that is not UTF-8 is 400 on REST and tRPC, and nothing is stored under a name with U+FFFD in it', async ({ service }) => {
  const body = (email: string) => Buffer.concat([Buffer.from(`{"email":"${email}`), Buffer.from([0xff]), Buffer.from(`@example.com","password":"${PASSWORD}","name":"B\xff"}`)]);
  const rest = await request(service.url, 'POST', `${AUTH}/register`, { body: body('utf8.rest'), headers: { 'content-type': 'application/json' } });
  assert.is(rest.status, 400, rest.text);
  assert.equal([rest.body.code, rest.body.message], ['INVALID_JSON', 'The request body is not valid UTF-8.']);
  const trpc = await request(service.url, 'POST', '/trpc/auth.register', { body: body('utf8.trpc'), headers: { 'content-type': 'application/json' } });
  assert.is(trpc.status, 400, trpc.text);
  assert.match(trpc.text, 'The request body is not valid UTF-8.');
  const stored = await service.deps.db.query(`SELECT 1 FROM accounts WHERE email LIKE 'utf8.%'`);
  assert.is(stored.length, 0);
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

test.run();
