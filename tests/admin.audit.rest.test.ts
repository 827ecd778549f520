import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertError, bearer, issuePaths, registerAdmin, registerAndVerify, type Account } from './helpers/auth.ts';
import { request, startTestApp, type HttpResult, type TestService } from './helpers/service.ts';
import { data, trpcOver } from './helpers/trpc-http.ts';
import { BULK, at, recordBulk } from './helpers/audit-bulk.ts';

// The activity export for auditors (docs/API.md, Operator API): GET /api/v1/admin/audit as an
// NDJSON stream, admin.auditExport a page at a time over tRPC, both recorded as an admin action.
// The rules of the paged export's cursor are called in process in tests/admin.audit.caller.test.ts.

const AUDIT = '/api/v1/admin/audit';
const LINE_KEYS = ['account_id', 'at', 'data', 'event', 'id', 'ip', 'user_agent'];

type Context = { service: TestService; admin: Account; user: Account; bulk: Account };
const test = suite<Context>('REST admin: the activity export, streamed as NDJSON, for administrators');

test.before(async (context) => {
  context.service = await startTestApp();
  context.admin = await registerAdmin(context.service, 'auditor@example.com');
  context.user = await registerAndVerify(context.service, 'audited.user@example.com');
  context.bulk = await registerAndVerify(context.service, 'busy.account@example.com');
  await recordBulk(context.service, context.bulk);
});
test.after(async ({ service }) => {
  await service?.close();
});

const exportOf = (service: TestService, query: string, credential?: string) => request(service.url, 'GET', `${AUDIT}${query}`, { headers: credential ? bearer(credential) : {} });

/** Every line of an NDJSON answer, parsed; the answer must end with a newline and hold no blank line. */
function linesOf(answer: HttpResult): any[] {
  assert.is(answer.status, 200, answer.text.slice(0, 500));
  assert.is(answer.headers.get('content-type'), 'application/x-ndjson');
  if (answer.text === '') return [];
  assert.ok(answer.text.endsWith('\n'), 'the last line ends with a newline');
  return answer.text.slice(0, -1).split('\n').map((line, index) => {
    assert.ok(line.length > 0, `line ${index} is not blank`);
    return JSON.parse(line);
  });
}

const bulkNumbers = (lines: any[]) => lines.filter((line) => line.data?.n !== undefined).map((line) => line.data.n as number);

async function exportsRecordedBy(service: TestService, accountId: number | null): Promise<Array<{ data: any }>> {
  return service.deps.db.query(`SELECT data FROM audit_events WHERE event = 'admin.audit_exported' AND account_id IS NOT DISTINCT FROM $1 ORDER BY id`, [accountId]);
}

test('one account: every event, one JSON object a line, oldest first, all pages in order with none twice', async ({ service, admin, bulk }) => {
  const lines = linesOf(await exportOf(service, `?account_id=${bulk.user.id}`, admin.token));
  for (const line of lines) {
    assert.equal(Object.keys(line).sort(), LINE_KEYS);
    assert.is(line.account_id, bulk.user.id);
    assert.match(line.id, /^[0-9]+$/);
    assert.is(new Date(line.at).toISOString(), line.at);
  }
  const ids = lines.map((line) => BigInt(line.id));
  assert.ok(ids.every((id, i) => i === 0 || id > ids[i - 1]), 'ids strictly increase: oldest first, no line twice');
  assert.equal(bulkNumbers(lines), Array.from({ length: BULK }, (_, n) => n), 'all 2,500 bulk events, in the order written');
  // Its own sign-up comes first: registered before the bulk was written.
  assert.is(lines[0].event, 'account.registered');
  const sample = lines.find((line) => line.data?.n === 1234);
  assert.equal(sample, { id: sample.id, at: at(1234), account_id: bulk.user.id, event: 'login.succeeded', ip: '198.51.100.9', user_agent: 'bulk-writer', data: { n: 1234 } });
});

test('since is inclusive and until exclusive, together with account_id or across every account', async ({ service, admin, bulk }) => {
  const window = `since=${encodeURIComponent(at(999))}&until=${encodeURIComponent(at(2001))}`;
  const one = linesOf(await exportOf(service, `?${window}&account_id=${bulk.user.id}`, admin.token));
  assert.equal(bulkNumbers(one), Array.from({ length: 1002 }, (_, n) => n + 999));
  assert.is(one.length, 1002, 'nothing outside the window');
  // Across accounts the window holds the bulk alone: everything else happened now, not in 2024.
  const all = linesOf(await exportOf(service, `?${window}`, admin.token));
  assert.equal(all, one);
  const sinceOnly = linesOf(await exportOf(service, `?since=${encodeURIComponent(at(BULK - 3))}&account_id=${bulk.user.id}`, admin.token));
  assert.equal(bulkNumbers(sinceOnly), [BULK - 3, BULK - 2, BULK - 1]);
  assert.ok(sinceOnly.length > 3, 'and what the account did at its sign-up, which is later than 2024');
  const untilOnly = linesOf(await exportOf(service, `?until=${encodeURIComponent(at(2))}`, admin.token));
  assert.equal(bulkNumbers(untilOnly), [0, 1]);
  assert.is(untilOnly.length, 2);
  assert.equal(linesOf(await exportOf(service, `?since=${encodeURIComponent(at(5))}&until=${encodeURIComponent(at(5))}`, admin.token)), [], 'an empty window is an empty stream');
});

test('without a filter: every account, the admin\'s and the user\'s included', async ({ service, admin, user, bulk }) => {
  const lines = linesOf(await exportOf(service, '', admin.token));
  const accounts = new Set(lines.map((line) => line.account_id));
  for (const id of [admin.user.id, user.user.id, bulk.user.id]) assert.ok(accounts.has(id), `account ${id} is in the export`);
  assert.is(new Set(lines.map((line) => line.id)).size, lines.length, 'no line twice');
  assert.is(bulkNumbers(lines).length, BULK);
});

test('the export is itself recorded, once however many pages it takes, with its filter', async ({ service, admin, bulk }) => {
  const before = (await exportsRecordedBy(service, admin.user.id)).length;
  const since = at(0);
  linesOf(await exportOf(service, `?account_id=${bulk.user.id}&since=${encodeURIComponent(since)}`, admin.token));
  const recorded = await exportsRecordedBy(service, admin.user.id);
  assert.is(recorded.length, before + 1);
  assert.equal(recorded[recorded.length - 1].data, { filter: { since, until: null, account_id: bulk.user.id } });
  // The admin reads it in their own activity, as any event.
  const activity = await request(service.url, 'GET', '/api/v1/auth/activity', { headers: bearer(admin.token) });
  assert.is(activity.body.items[0].event, 'admin.audit_exported');
});

test('not an admin: 403 FORBIDDEN with the error body; no credentials: 401; nothing recorded, nothing streamed', async ({ service, user }) => {
  const before = (await service.deps.db.query(`SELECT count(*)::int AS n FROM audit_events WHERE event = 'admin.audit_exported'`))[0];
  for (const credential of [user.token, user.apiKey]) {
    const refused = await exportOf(service, '', credential);
    assertError(refused, 403, 'FORBIDDEN');
    assert.match(refused.headers.get('content-type') ?? '', /^application\/json/);
  }
  const anonymous = await exportOf(service, '');
  assertError(anonymous, 401, 'UNAUTHORIZED');
  assert.is(anonymous.headers.get('www-authenticate'), 'Bearer');
  assertError(await exportOf(service, '', 'not-a-token'), 401, 'UNAUTHORIZED');
  assert.equal((await service.deps.db.query(`SELECT count(*)::int AS n FROM audit_events WHERE event = 'admin.audit_exported'`))[0], before);
});

test('bad query values: 400 VALIDATION_FAILED naming the parameter, before any line, and nothing recorded', async ({ service, admin }) => {
  const before = (await exportsRecordedBy(service, admin.user.id)).length;
  const cases: Array<[string, string]> = [
    ['?since=yesterday', 'since'],
    ['?until=2026-13-45T00:00:00Z', 'until'],
    ['?since=2026-11-23', 'since'],
    [`?since=${encodeURIComponent(at(10))}&until=${encodeURIComponent(at(9))}`, 'since'],
    ['?account_id=abc', 'account_id'],
    ['?account_id=1.5', 'account_id'],
    ['?account_id=0', 'account_id'],
    ['?account_id=-4', 'account_id'],
    ['?account_id=99999999999', 'account_id'],
    ['?account_id=1&account_id=2', 'account_id'],
    ['?acount_id=1', 'acount_id'],
    ['?cursor=1000', 'cursor'],
    ['?cursor=v2.abc.def.ghi.jkl', 'cursor'],
  ];
  for (const [query, field] of cases) {
    const refused = await exportOf(service, query, admin.token);
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(refused), [field], `${query}: ${refused.text}`);
  }
  assert.is((await exportsRecordedBy(service, admin.user.id)).length, before);
});

test('only GET: another method on the path is 405 with the error body', async ({ service, admin }) => {
  const refused = await request(service.url, 'POST', AUDIT, { json: {}, headers: bearer(admin.token) });
  assertError(refused, 405, 'METHOD_NOT_ALLOWED');
  assert.match(refused.headers.get('allow') ?? '', 'GET');
});

test('tRPC admin.auditExport: the same events a page of 1000 at a time, next_cursor to the end, recorded once', async ({ service, admin, user, bulk }) => {
  const trpc = trpcOver(service);
  const before = (await exportsRecordedBy(service, admin.user.id)).length;
  const streamed = linesOf(await exportOf(service, `?account_id=${bulk.user.id}`, admin.token));
  const pages: any[] = [];
  let cursor: string | undefined;
  do {
    const answer = await trpc.query(admin, 'admin.auditExport', { account_id: bulk.user.id, ...(cursor ? { cursor } : {}) });
    assert.is(answer.status, 200, answer.text.slice(0, 500));
    pages.push(data(answer));
    cursor = data(answer).next_cursor ?? undefined;
  } while (cursor);
  assert.equal(pages.map((page) => page.items.length), [1000, 1000, streamed.length - 2000]);
  assert.equal(pages.flatMap((page) => page.items), streamed, 'the pages hold what the stream holds');
  assert.is((await exportsRecordedBy(service, admin.user.id)).length, before + 2, 'one for the stream, one for the paged export');

  const refused = await trpc.query(user, 'admin.auditExport', {});
  assert.is(refused.status, 403);
  assert.is(refused.body.error.data.appCode, 'FORBIDDEN');
  const invalid = await trpc.query(admin, 'admin.auditExport', { since: 'soon' });
  assert.is(invalid.status, 400);
  assert.equal(invalid.body.error.data.issues.map((issue: { path: string }) => issue.path), ['since']);
});



test('the route is in the OpenAPI document: NDJSON success, the one error body, admin security', async ({ service }) => {
  const document = (await request(service.url, 'GET', '/api/v1/openapi.json')).body;
  const operation = document.paths['/admin/audit'].get;
  assert.is(operation.operationId, 'admin-auditExport');
  assert.equal(Object.keys(operation.responses['200'].content), ['application/x-ndjson']);
  assert.equal(operation.parameters.map((parameter: { name: string }) => parameter.name), ['since', 'until', 'account_id']);
  assert.equal(Object.keys(operation.responses).sort(), ['200', '400', '401', '403', '408', '431', '500', '503']);
  assert.equal(operation.responses['403'].content['application/json'].schema.allOf[1].properties.code.enum, ['FORBIDDEN', 'MFA_SETUP_REQUIRED']);
  assert.is(operation.responses['403'].content['application/json'].schema.allOf[0].$ref, '#/components/schemas/Error');
  assert.equal(operation.security, [{ bearer: [] }, { cookie: [] }]);
});

test.run();
