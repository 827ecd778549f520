import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createGatehouseClient } from '../client/src/index.ts';
import { assertError, bearer, issuePaths, startWithAdmin, type WithAdmin } from './helpers/auth.ts';
import { request, testFetch, type TestService } from './helpers/service.ts';
import { insertDelivery } from './helpers/webhook-fixtures.ts';

// The operator's webhook inbox over REST and tRPC (docs/API.md, Operator API): what HTTP adds to the
// rules tested in process in tests/admin.inbox.caller.test.ts. admin.* for role admin only, a
// list's query string, and a tRPC call with no input.

const ADMIN = '/api/v1/admin';

const test = suite<WithAdmin>('REST admin: the webhook inbox, for administrators');

test.before(async (context) => {
  Object.assign(context, await startWithAdmin());
});
test.after(async ({ service }) => {
  await service?.close();
});

const get = (service: TestService, path: string, credential?: string) => request(service.url, 'GET', `${ADMIN}${path}`, { headers: credential ? bearer(credential) : {} });

test('every admin route is 403 FORBIDDEN for an account that is not an admin, and 401 without credentials', async ({ service, user }) => {
  const id = randomUUID();
  const routes: Array<[string, string]> = [['GET', '/inbox/stats'], ['GET', '/inbox'], ['GET', `/inbox/${id}`], ['POST', `/inbox/${id}/replay`], ['POST', '/inbox/replay']];
  for (const [method, path] of routes) {
    const json = method === 'POST' ? {} : undefined;
    assertError(await request(service.url, method, `${ADMIN}${path}`, { json, headers: bearer(user.token) }), 403, 'FORBIDDEN');
    assertError(await request(service.url, method, `${ADMIN}${path}`, { json, headers: bearer(user.apiKey) }), 403, 'FORBIDDEN');
    assertError(await request(service.url, method, `${ADMIN}${path}`, { json }), 401, 'UNAUTHORIZED');
  }
  for (const procedure of ['admin.inboxStats', 'admin.listInbox']) {
    const viaTrpc = await request(service.url, 'GET', `/trpc/${procedure}`, { headers: bearer(user.token) });
    assert.is(viaTrpc.status, 403);
    assert.is(viaTrpc.body.error.data.appCode, 'FORBIDDEN');
  }
});

test('the lists whose filters are all optional take a tRPC call with no input, as REST takes a request with no query', async ({ service, admin }) => {
  const id = await insertDelivery(service, { provider: 'operator', payload: '{}', state: 'ignored' });
  // The typed client lets the argument out, and the wire carries no input at all.
  const client = createGatehouseClient({ url: `${service.url}/trpc`, token: admin.token, fetch: testFetch }).admin;
  const listed = await client.listInbox.query();
  assert.ok(listed.items.some((item) => item.id === id));
  assert.ok(Array.isArray((await client.eventDeliveries.query()).items));
  assert.ok((await client.auditExport.query()).items.length > 0, "the admin's own registration is in the log");
  for (const procedure of ['admin.listInbox', 'admin.eventDeliveries', 'admin.auditExport']) {
    const plain = await request(service.url, 'GET', `/trpc/${procedure}`, { headers: bearer(admin.token) });
    assert.is(plain.status, 200, `${procedure}: ${plain.text}`);
  }
  // A filter that is given is still checked.
  const wrong = await request(service.url, 'GET', `/trpc/admin.listInbox?input=${encodeURIComponent(JSON.stringify({ state: 'lost' }))}`, { headers: bearer(admin.token) });
  assert.is(wrong.status, 400);
  assert.is(wrong.body.error.data.appCode, 'VALIDATION_FAILED');
});

test("the list's query string: each value read as its type, and one that is not is 400 naming its parameter", async ({ service, admin }) => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await insertDelivery(service, { provider: 'messengerone', scope: 'q', payload: `{"n":${i}}`, state: i % 2 ? 'dead' : 'processed', ageMs: (10 - i) * 60_000 }));
  const since = new Date(service.clock.now().getTime() - 9 * 60_000).toISOString();
  const page = await get(service, `/inbox?provider=messengerone&state=processed&limit=2&since=${encodeURIComponent(since)}`, admin.token);
  assert.is(page.status, 200, page.text);
  assert.equal(page.body.items.map((item: { id: string }) => item.id), [ids[2]], 'the other processed one is older than since');
  assert.is(page.body.next_cursor, null);

  for (const [query, field] of [['limit=0', 'limit'], ['limit=201', 'limit'], ['limit=ten', 'limit'], ['state=lost', 'state'], ['provider=paypal', 'provider'], ['since=yesterday', 'since'], ['cursor=not-ours', 'cursor']]) {
    const refused = await get(service, `/inbox?${query}`, admin.token);
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(refused), [field], query);
  }
  await service.deps.db.query(`DELETE FROM webhook_inbox WHERE provider = 'messengerone'`);
});

test('each inbox route answers over REST as its procedure does: stats, one delivery, a replay, a bulk replay', async ({ service, admin }) => {
  const id = await insertDelivery(service, { provider: 'operator', payload: '{"update_id":3}', state: 'ignored' });
  const stats = await get(service, '/inbox/stats', admin.token);
  assert.is(stats.status, 200, stats.text);
  assert.ok(stats.body.providers.some((provider: { provider: string; ignored: number }) => provider.provider === 'operator' && Number(provider.ignored) >= 1));
  const shown = await get(service, `/inbox/${id}`, admin.token);
  assert.is(shown.status, 200, shown.text);
  assert.equal([shown.body.delivery.id, shown.body.delivery.payload], [id, '{"update_id":3}']);
  const post = (path: string, json: unknown) => request(service.url, 'POST', `${ADMIN}${path}`, { json, headers: bearer(admin.token) });
  const replayed = await post(`/inbox/${id}/replay`, {});
  assert.is(replayed.status, 200, replayed.text);
  assert.equal(replayed.body, { success: true });
  const bulk = await post('/inbox/replay', { provider: 'billing', since: new Date(service.clock.now().getTime() + 60_000).toISOString() });
  assert.is(bulk.status, 200, bulk.text);
  assert.equal(bulk.body, { success: true, replayed: 0 });
  assertError(await get(service, `/inbox/${randomUUID()}`, admin.token), 404, 'NOT_FOUND');
});

test.run();
