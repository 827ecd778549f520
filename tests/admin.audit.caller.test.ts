import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { registerAdmin, registerAndVerify, type Account } from './helpers/auth.ts';
import { at, recordBulk } from './helpers/audit-bulk.ts';
import { answerOf, callerOf } from './helpers/caller.ts';
import { startTestApp, type HttpResult, type TestService } from './helpers/service.ts';

// The paged activity export for auditors (docs/API.md, Operator API): the rules of
// admin.auditExport's cursor, called in process. Its next_cursor is sealed, names the export's
// record, its admin and its filters, and runs out after an hour; nothing else reads on. The NDJSON
// stream, refusals and the same events over tRPC are tested in tests/admin.audit.rest.test.ts.

type Context = { service: TestService; admin: Account; bulk: Account };
const test = suite<Context>('admin.auditExport: a page at a time, under a cursor only the export gave out');

test.before(async (context) => {
  context.service = await startTestApp();
  context.admin = await registerAdmin(context.service, 'auditor@example.com');
  context.bulk = await registerAndVerify(context.service, 'busy.account@example.com');
  await recordBulk(context.service, context.bulk);
});
test.after(async ({ service }) => {
  await service?.close();
});

/** A page of admin.auditExport as `admin`; any input, as a client that ignores the types would send it. */
const exportPage = (service: TestService, admin: Account, input: unknown) => answerOf(callerOf(service, { bearer: admin.token }).admin.auditExport(input as never));

/** The admin.audit_exported lines of `accountId`, with their ids. */
async function exportRecords(service: TestService, accountId: number) {
  return service.deps.db.query<{ id: string; data: any }>(`SELECT id::text AS id, data FROM audit_events WHERE event = 'admin.audit_exported' AND account_id = $1 ORDER BY id`, [accountId]);
}

/** A refusal naming `cursor` alone, with no page; its message. */
function refusedCursor(answer: HttpResult, what: string): string {
  assert.is(answer.status, 400, `${what}: ${answer.text.slice(0, 300)}`);
  assert.is(answer.body.code, 'VALIDATION_FAILED', what);
  assert.equal(answer.body.issues.map((issue: { path: string }) => issue.path), ['cursor'], what);
  assert.not.ok('items' in answer.body, `${what}: no page`);
  return answer.body.issues[0].message;
}

test('admin.auditExport: a cursor it did not give out, or given with other filters, is 400 naming cursor; nothing is read or recorded', async ({ service, admin, bulk }) => {
  const filter = { account_id: bulk.user.id };
  const first = await exportPage(service, admin, filter);
  assert.is(first.status, 200, first.text.slice(0, 300));
  const cursor = first.body.next_cursor as string;
  assert.type(cursor, 'string');
  const before = await exportRecords(service, admin.user.id);

  // What the finding did: a cursor made up by the caller read the whole log, recorded nowhere.
  const madeUp = ['0', '1', '1000', '9223372036854775807', first.body.items[999].id];
  const tampered = [`${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`, cursor.split('.').slice(0, 4).join('.'), Buffer.from(JSON.stringify({ after: '0' })).toString('base64url')];
  for (const made of [...madeUp, ...tampered]) {
    assert.match(refusedCursor(await exportPage(service, admin, { ...filter, cursor: made }), made), /next_cursor this export gave out/);
  }
  // Another filter, or none, under a real cursor: the cursor names its export's filters.
  const others = [{}, { account_id: admin.user.id }, { ...filter, since: at(0) }, { ...filter, until: at(10) }];
  for (const other of others) {
    assert.match(refusedCursor(await exportPage(service, admin, { ...other, cursor }), JSON.stringify(other)), /other filters/);
  }
  // Another admin cannot read on under this admin's record.
  const second = await registerAdmin(service, `second-auditor-${Date.now()}@example.com`);
  refusedCursor(await exportPage(service, second, { ...filter, cursor }), 'another admin');
  // Garbage in the cursor's place: a 4xx naming it, never a 5xx.
  const garbage: unknown[] = ['', ' ', 'a'.repeat(1001), 'abc\u0000def', 'abc\ndef', '💥', '../../etc/passwd', "1' OR '1'='1", 42, -1, 1.5, null, true, [cursor], { cursor }];
  for (const value of garbage) {
    const answer = await exportPage(service, admin, { ...filter, cursor: value });
    assert.ok(answer.status >= 400 && answer.status < 500, `${JSON.stringify(value)}: ${answer.status}`);
    assert.equal(answer.body.issues?.map((issue: { path: string }) => issue.path), ['cursor'], JSON.stringify(value));
  }
  assert.equal(await exportRecords(service, admin.user.id), before, 'nothing recorded by a refused page');
  assert.equal(await exportRecords(service, second.user.id), []);

  // The real cursor still reads on, for its admin and its filters.
  const next = await exportPage(service, admin, { ...filter, cursor });
  assert.is(next.status, 200, next.text.slice(0, 300));
  assert.ok(BigInt(next.body.items[0].id) > BigInt(first.body.items[999].id), 'the next page starts after the first');
});

test("admin.auditExport: each next_cursor names the export's record and its filters, and runs out after an hour", async ({ service, admin, bulk }) => {
  const filter = { account_id: bulk.user.id, since: at(0) };
  const before = (await exportRecords(service, admin.user.id)).length;
  const first = await exportPage(service, admin, filter);
  const records = await exportRecords(service, admin.user.id);
  assert.is(records.length, before + 1, 'the first page records the export');
  const record = records[records.length - 1];
  assert.equal(record.data, { filter: { since: at(0), until: null, account_id: bulk.user.id } });
  const open = (cursor: string) => JSON.parse(service.deps.secretBox.open(cursor, { column: 'audit_export_cursor', row: admin.user.id }));
  const sealed = first.body.next_cursor as string;
  assert.not.ok(sealed.includes(first.body.items[999].id), 'the position is not readable in the cursor');
  const cursor = open(sealed);
  assert.is(cursor.export, record.id, "the cursor names the export's record");
  assert.equal(cursor.filter, { since: at(0), until: null, account_id: bulk.user.id });
  const second = await exportPage(service, admin, { ...filter, cursor: sealed });
  assert.is(second.status, 200, second.text.slice(0, 300));
  assert.is(open(second.body.next_cursor).export, record.id, 'every page under the same record');
  assert.is((await exportRecords(service, admin.user.id)).length, before + 1, 'and no page records another');

  service.clock.advance(61 * 60 * 1000);
  try {
    assert.match(refusedCursor(await exportPage(service, admin, { ...filter, cursor: second.body.next_cursor }), 'expired'), /expired/);
  } finally {
    service.clock.advance(-61 * 60 * 1000);
  }
});

test.run();
