import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createGatehouseClient, TRPCClientError, type RouterOutputs } from '../client/src/index.ts';
import { ADMIN_CHANGES, ADMIN_READS } from '../server/src/admin/admin.overview.service.ts';
import { AUDIT_EVENTS } from '../server/src/modules/activity/index.ts';
import { AUTH, assertError, bearer, issuePaths, login, nextMail, registerAdmin, registerAndVerify, registerForToken, type Account } from './helpers/auth.ts';
import { request, startTestApp, testFetch, type HttpResult, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';
import { data, trpcOver } from './helpers/trpc-http.ts';

// The admin API behind the operator's console (docs/API.md, Operator API): the overview, and
// accounts searched, shown, given a role and sent a new verification link. Admins only; every
// read and change in the acting admin's activity log; the overview lists changes, not reads.

const ADMIN = '/api/v1/admin';
const SEARCH_KEYS = ['created_at', 'email', 'email_verified', 'id', 'mfa', 'name', 'plan', 'role'];
const ACCOUNT_KEYS = ['company', ...SEARCH_KEYS].sort();

type Context = { service: TestService; admin: Account; user: Account };
const test = suite<Context>('REST admin console: overview, account search, account, role, resend verification');

test.before(async (context) => {
  context.service = await startTestApp();
  context.admin = await registerAdmin(context.service, 'console.admin@example.com');
  context.user = await registerAndVerify(context.service, 'console.user@example.com');
});
test.after(async ({ service }) => {
  await service?.close();
});

const get = (service: TestService, path: string, caller?: Account) => request(service.url, 'GET', `${ADMIN}${path}`, { headers: caller ? bearer(caller.token) : {} });
const post = (service: TestService, path: string, json: unknown, caller?: Account) =>
  request(service.url, 'POST', `${ADMIN}${path}`, { json, headers: caller ? bearer(caller.token) : {} });
const setRole = (service: TestService, id: number | string, role: unknown, caller: Account) => post(service, `/accounts/${id}/role`, { role }, caller);

type AuditRow = { event: string; data: Record<string, unknown> | null };
const auditOf = (service: TestService, accountId: number) =>
  service.deps.db.query<AuditRow>('SELECT event, data FROM audit_events WHERE account_id = $1 ORDER BY id', [accountId]);
const lastAudit = async (service: TestService, accountId: number) => (await auditOf(service, accountId)).at(-1);

function assertIssues(result: HttpResult, paths: string[], label: string) {
  assertError(result, 400, 'VALIDATION_FAILED');
  assert.equal(issuePaths(result), paths, `${label}: ${result.text}`);
}

test('every console route is 403 FORBIDDEN for a user, by JWT or API key, over REST and tRPC; 401 without credentials', async ({ service, admin, user }) => {
  const routes: Array<[string, string, unknown]> = [
    ['GET', '/overview', undefined],
    ['GET', '/accounts/search?q=console', undefined],
    ['GET', `/accounts/${admin.user.id}`, undefined],
    ['POST', `/accounts/${admin.user.id}/role`, { role: 'user' }],
    ['POST', `/accounts/${admin.user.id}/resend-verification`, {}],
  ];
  for (const [method, path, json] of routes) {
    for (const credential of [user.token, user.apiKey]) {
      assertError(await request(service.url, method, `${ADMIN}${path}`, { json, headers: bearer(credential) }), 403, 'FORBIDDEN');
    }
    assertError(await request(service.url, method, `${ADMIN}${path}`, { json }), 401, 'UNAUTHORIZED');
  }
  const trpc = trpcOver(service);
  for (const [kind, path, input] of [
    ['query', 'admin.overview', undefined],
    ['query', 'admin.searchAccounts', { q: 'console' }],
    ['query', 'admin.account', { id: admin.user.id }],
    ['mutation', 'admin.setRole', { id: admin.user.id, role: 'user' }],
    ['mutation', 'admin.resendVerification', { id: admin.user.id }],
  ] as const) {
    const refused = kind === 'query' ? await trpc.query(user, path, input) : await trpc.mutation(user, path, input);
    assert.is(refused.status, 403, path);
    assert.is(refused.body.error.data.appCode, 'FORBIDDEN', path);
  }
  assert.is((await login(service, admin.email)).body.user.role, 'admin', 'nothing was changed');
  assert.equal((await auditOf(service, user.user.id)).filter((row) => row.event.startsWith('admin.')), [], 'a refusal is no admin action');
});

test('the typed client calls the console procedures by their names, typed; a user gets FORBIDDEN from each', async ({ service, admin, user }) => {
  const client = createGatehouseClient({ fetch: testFetch, url: `${service.url}/trpc`, token: admin.token }).admin;
  const target = await registerAndVerify(service, 'typed.client.target@example.com');
  const overview: RouterOutputs['admin']['overview'] = await client.overview.query();
  assert.is(overview.logins.length, 24);
  const found = await client.searchAccounts.query({ q: 'typed.client' });
  assert.equal(found.items.map((item) => item.id), [target.user.id]);
  const shown = await client.account.query({ id: target.user.id });
  assert.is(shown.account.email, target.email);
  assert.is((await client.setRole.mutate({ id: target.user.id, role: 'admin' })).account.role, 'admin');
  assert.is((await client.setRole.mutate({ id: target.user.id, role: 'user' })).changed, true);
  const conflict = await client.resendVerification.mutate({ id: target.user.id }).catch((error: unknown) => error);
  assert.instance(conflict, TRPCClientError);
  assert.is((conflict as TRPCClientError<any>).data?.appCode, 'CONFLICT');

  const plain = createGatehouseClient({ fetch: testFetch, url: `${service.url}/trpc`, token: user.token }).admin;
  const calls: Array<[string, () => Promise<unknown>]> = [
    ['overview', () => plain.overview.query()],
    ['searchAccounts', () => plain.searchAccounts.query({})],
    ['account', () => plain.account.query({ id: target.user.id })],
    ['setRole', () => plain.setRole.mutate({ id: user.user.id, role: 'admin' })],
    ['resendVerification', () => plain.resendVerification.mutate({ id: target.user.id })],
  ];
  for (const [name, call] of calls) {
    const error = await call().then(() => assert.unreachable(`${name} answered a plain user`), (failure: unknown) => failure);
    assert.is((error as TRPCClientError<any>).data?.appCode, 'FORBIDDEN', name);
  }
});

test('every admin.* event of the activity log is either a change (listed by the overview) or a read (not listed)', () => {
  const changes = new Set<string>(ADMIN_CHANGES);
  const reads = new Set<string>(ADMIN_READS);
  assert.equal([...changes].filter((event) => reads.has(event)), [], 'in both lists');
  assert.equal(AUDIT_EVENTS.filter((event) => event.startsWith('admin.') && !changes.has(event) && !reads.has(event)), [], 'in neither list');
  assert.ok(changes.has('account.promoted'));
});

// ------------------------------------------------------------------ the overview

const HOUR = 3_600_000;

/** An activity line at `hoursAgo` before the service's clock, as the modules write them. */
async function activityAt(service: TestService, event: string, hoursAgo: number, accountId: number | null = null) {
  const at = new Date(service.clock.now().getTime() - hoursAgo * HOUR);
  await service.deps.db.query('INSERT INTO audit_events (account_id, event, at) VALUES ($1, $2, $3)', [accountId, event, at]);
}

test('overview: the accounts counted; sign-ins and failed ones per UTC hour over 24 hours, oldest first', async ({ service, admin }) => {
  const before = await get(service, '/overview', admin);
  assert.is(before.status, 200, before.text);
  assert.equal(Object.keys(before.body).sort(), ['accounts', 'endpoints', 'inbox', 'logins', 'recent_actions', 'success']);

  const hours = before.body.logins.map((bucket: { hour: string }) => bucket.hour);
  assert.is(hours.length, 24);
  const current = Math.floor(service.clock.now().getTime() / HOUR) * HOUR;
  assert.equal(hours, Array.from({ length: 24 }, (_, index) => new Date(current - (23 - index) * HOUR).toISOString()));

  await registerAndVerify(service, 'overview.verified@example.com');
  await registerForToken(service, 'overview.unverified@example.com');
  const withFactor = await registerAndVerify(service, 'overview.factor@example.com');
  await service.deps.db.query(`INSERT INTO mfa_totp (account_id, secret_sealed, enabled_at, created_at) VALUES ($1, 'x', now(), now())`, [withFactor.user.id]);
  const pendingFactor = await registerAndVerify(service, 'overview.pending.factor@example.com');
  await service.deps.db.query(`INSERT INTO mfa_totp (account_id, secret_sealed, created_at) VALUES ($1, 'x', now())`, [pendingFactor.user.id]);

  const beforeLogins = (await get(service, '/overview', admin)).body.logins;
  const lines: Array<[string, number]> = [
    ['login.succeeded', 0],
    ['login.succeeded', 0.5],
    ['login.oauth', 3],
    ['login.failed', 3],
    ['login.mfa_failed', 5],
    ['login.locked', 23],
    // Neither outside the 24 hours, nor an event that is no sign-in or failed one.
    ['login.failed', 24.5],
    ['login.mfa_required', 1],
    ['logout', 1],
  ];
  for (const [event, hoursAgo] of lines) await activityAt(service, event, hoursAgo);
  const after = await get(service, '/overview', admin);
  const added = after.body.logins.map((bucket: any, index: number) => [bucket.succeeded - beforeLogins[index].succeeded, bucket.failed - beforeLogins[index].failed]);
  const expected = Array.from({ length: 24 }, () => [0, 0]);
  const minutes = new Date(service.clock.now()).getUTCMinutes();
  // Half an hour ago is this hour or the one before, as the clock's minutes say.
  expected[23][0] += minutes >= 30 ? 2 : 1;
  if (minutes < 30) expected[22][0] += 1;
  expected[20] = [1, 1];
  expected[18][1] += 1;
  expected[0][1] += 1;
  assert.equal(added, expected);

  const counts = (answer: HttpResult) => answer.body.accounts;
  assert.equal(
    Object.fromEntries(Object.entries(counts(after)).map(([key, value]) => [key, (value as number) - counts(before)[key]])),
    { total: 4, verified: 3, mfa: 1, new_7d: 4 },
  );
  const [row] = await service.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM accounts');
  assert.is(counts(after).total, row.n);
});

test('overview: the inbox as inbox/stats gives it, and each event endpoint with the age of its oldest pending delivery', async ({ service, admin }) => {
  const created = await post(service, '/event-endpoints', { url: 'http://127.0.0.1:9/console-hook', events: ['account.deleted'] }, admin);
  assert.is(created.status, 201, created.text);
  const endpointOf = (answer: HttpResult) => answer.body.endpoints.find((endpoint: { id: string }) => endpoint.id === created.body.endpoint.id);
  const first = await get(service, '/overview', admin);
  assert.equal(endpointOf(first), { id: created.body.endpoint.id, url: 'http://127.0.0.1:9/console-hook', enabled: true, oldest_pending_seconds: null });
  assert.equal(first.body.inbox, (await get(service, '/inbox/stats', admin)).body.providers);

  // A ping waits for its first attempt until the clock reaches it: pending, and aging with the clock.
  await service.deps.db.query(`UPDATE event_endpoints SET enabled = false WHERE id = $1`, [created.body.endpoint.id]);
  await service.deps.db.query(
    `INSERT INTO events (id, type, account_id, body, created_at) VALUES ('msg_console', 'ping', NULL, '{}', $1)`,
    [service.clock.now()],
  );
  await service.deps.db.query(
    `INSERT INTO event_deliveries (id, endpoint_id, event_id, account_id, type, state, attempts, step, next_attempt_at, created_at)
     VALUES (gen_random_uuid(), $1, 'msg_console', NULL, 'ping', 'pending', 0, 0, $2, $3)`,
    [created.body.endpoint.id, new Date(service.clock.now().getTime() + 3_600_000), service.clock.now()],
  );
  service.clock.advance(90_000);
  const later = await get(service, '/overview', admin);
  assert.equal(endpointOf(later), { id: created.body.endpoint.id, url: 'http://127.0.0.1:9/console-hook', enabled: false, oldest_pending_seconds: 90 });
});

test('overview: the 10 latest changes by admins, newest first, with who did it and to which account; reads are recorded but not listed', async ({ service, admin }) => {
  const other = await registerAdmin(service, 'overview.other.admin@example.com');
  const targets = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((name) => registerAndVerify(service, `overview.target.${name}@example.com`)));
  for (const target of targets) {
    service.clock.advance(1000);
    assert.is((await setRole(service, target.user.id, 'admin', admin)).status, 200);
    service.clock.advance(1000);
    assert.is((await setRole(service, target.user.id, 'user', other)).status, 200);
  }
  // Reads after them: none of them is listed.
  service.clock.advance(1000);
  await get(service, '/accounts/search?q=overview.', admin);
  await get(service, `/accounts/${targets[0].user.id}`, admin);
  await get(service, '/inbox/stats', admin);
  const answer = await get(service, '/overview', admin);
  const recent = answer.body.recent_actions;
  assert.is(recent.length, 10);
  const expected = targets.slice(1).reverse().flatMap((target) => [
    { admin_id: other.user.id, type: 'admin.role_changed', account_id: target.user.id },
    { admin_id: admin.user.id, type: 'admin.role_changed', account_id: target.user.id },
  ]);
  assert.equal(recent.map(({ at: _at, ...action }: { at: string }) => action), expected);
  assert.ok(recent.every((action: { at: string }, index: number) => index === 0 || action.at <= recent[index - 1].at), 'newest first');
  assert.is((await lastAudit(service, admin.user.id))?.event, 'admin.overview_read', 'the overview read is recorded');
});

// ------------------------------------------------------------------ search

test('searchAccounts: by the start of the address in any case, newest first; wildcards are literal; an id finds its account', async ({ service, admin }) => {
  const made: Account[] = [];
  for (const email of ['find.alpha1@example.com', 'find.alpha2@example.com', 'find.beta@example.com', 'find_x@example.com', 'findyx@example.com']) {
    made.push(await registerAndVerify(service, email));
  }
  const search = async (query: string) => {
    const answer = await get(service, `/accounts/search${query}`, admin);
    assert.is(answer.status, 200, `${query}: ${answer.text}`);
    return answer.body;
  };
  const emails = (body: { items: Array<{ email: string }> }) => body.items.map((item) => item.email);

  const alphas = await search(`?q=${encodeURIComponent('  FIND.Alpha ')}`);
  assert.equal(emails(alphas), ['find.alpha2@example.com', 'find.alpha1@example.com']);
  assert.is(alphas.next_cursor, null);
  assert.equal(Object.keys(alphas.items[0]).sort(), SEARCH_KEYS);
  const { api_key: _key, company: _company, ...summary } = made[1].user;
  assert.equal(alphas.items[0], { ...summary, mfa: false });
  assert.not.match(JSON.stringify(alphas), made[1].apiKey);

  assert.equal(emails(await search('?q=find_')), ['find_x@example.com'], '_ is an underscore, not any character');
  assert.equal(emails(await search(`?q=${encodeURIComponent('find%')}`)), [], '% is a percent sign');
  assert.equal(emails(await search(`?q=${made[2].user.id}`)), ['find.beta@example.com']);
  assert.equal(emails(await search('?q=find.alpha1@example.com')), ['find.alpha1@example.com'], 'a whole address is its own prefix');
  assert.equal(emails(await search('?q=nobody.here')), []);

  // A page at a time, every match once.
  const seen: string[] = [];
  let cursor: string | null = '';
  for (let pages = 0; cursor !== null; pages++) {
    assert.ok(pages < 10, 'the pages end');
    const page = await search(`?q=find&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    assert.ok(page.items.length <= 2);
    seen.push(...emails(page));
    cursor = page.next_cursor;
  }
  assert.equal(seen, made.map((account) => account.email).reverse());

  // Without q: every account, newest first.
  const everyone = await search('?limit=200');
  assert.equal(everyone.items.slice(0, 5).map((item: { id: number }) => item.id), made.map((account) => account.user.id).reverse());
  assert.is((await lastAudit(service, admin.user.id))?.event, 'admin.accounts_searched');
  assert.equal((await lastAudit(service, admin.user.id))?.data, { q: null, cursor: null, found: everyone.items.length });

  const trpc = await trpcOver(service).query(admin, 'admin.searchAccounts', { q: 'find.beta' });
  assert.equal(emails(data(trpc)), ['find.beta@example.com']);
  assert.equal(emails(data(await trpcOver(service).query(admin, 'admin.searchAccounts'))).length > 0, true, 'no input at all over tRPC');
});

test('searchAccounts: a second factor shows as mfa: true', async ({ service, admin }) => {
  const account = await registerAndVerify(service, 'second.factor.shown@example.com');
  await service.deps.db.query(`INSERT INTO mfa_totp (account_id, secret_sealed, enabled_at, created_at) VALUES ($1, 'x', now(), now())`, [account.user.id]);
  const answer = await get(service, '/accounts/search?q=second.factor.shown', admin);
  assert.equal(answer.body.items.map((item: { mfa: boolean }) => item.mfa), [true]);
});

test('searchAccounts refuses garbage with 400 naming the field', async ({ service, admin }) => {
  const cases: Array<[string, string[]]> = [
    ['?limit=0', ['limit']],
    ['?limit=201', ['limit']],
    ['?limit=1.5', ['limit']],
    ['?limit=many', ['limit']],
    ['?cursor=abc', ['cursor']],
    ['?cursor=-1', ['cursor']],
    ['?cursor=12345678901', ['cursor']],
    [`?q=${'a'.repeat(255)}`, ['q']],
    ['?q=a&q=b', ['q']],
    [`?q=${encodeURIComponent('find\u0007')}`, ['q']],
    ['?query=find', ['query']],
  ];
  for (const [query, paths] of cases) assertIssues(await get(service, `/accounts/search${query}`, admin), paths, query);
  const trpc = await trpcOver(service).query(admin, 'admin.searchAccounts', { q: 42, limit: 0 });
  assert.is(trpc.status, 400);
  assert.equal(trpc.body.error.data.issues.map((issue: { path: string }) => issue.path), ['q', 'limit']);
});

// ------------------------------------------------------------------ one account

test('account: without its API key, with its identities, live sessions and latest activity; the read is recorded', async ({ service, admin }) => {
  const shown = await registerAndVerify(service, 'shown@example.com', { name: 'Shown', company: 'Shown Ltd' });
  await login(service, shown.email);
  const answer = await get(service, `/accounts/${shown.user.id}`, admin);
  assert.is(answer.status, 200, answer.text);
  assert.equal(Object.keys(answer.body).sort(), ['account', 'activity', 'identities', 'sessions', 'success']);
  assert.equal(Object.keys(answer.body.account).sort(), ACCOUNT_KEYS);
  const { api_key: _key, ...summary } = shown.user;
  assert.equal(answer.body.account, { ...summary, mfa: false });
  assert.equal([summary.name, summary.company], ['Shown', 'Shown Ltd']);
  assert.not.match(answer.text, shown.apiKey);
  assert.equal(answer.body.identities, []);
  assert.is(answer.body.sessions.length, 2);
  assert.equal(Object.keys(answer.body.sessions[0]).sort(), ['created_at', 'id', 'ip', 'last_used_at', 'user_agent', 'via']);
  assert.equal(answer.body.sessions.map((session: { via: string }) => session.via), ['password', 'password']);
  const events = answer.body.activity.map((item: { event: string }) => item.event);
  assert.equal(events.slice(0, 2), ['login.succeeded', 'login.succeeded']);
  assert.ok(events.includes('email.verified') && events.includes('account.registered'), events.join());
  assert.equal(Object.keys(answer.body.activity[0]).sort(), ['at', 'event', 'ip', 'user_agent']);
  assert.equal(await lastAudit(service, admin.user.id), { event: 'admin.account_read', data: { account: shown.user.id } });

  const trpc = data(await trpcOver(service).query(admin, 'admin.account', { id: shown.user.id }));
  assert.is(trpc.account.id, shown.user.id);
});

test('account: 404 for an id no account has; 400 for one that is no account id', async ({ service, admin }) => {
  assertError(await get(service, '/accounts/2147483647', admin), 404, 'NOT_FOUND');
  assert.equal(await lastAudit(service, admin.user.id), { event: 'admin.account_read', data: { account: null } }, 'a look that finds nothing is recorded too');
  for (const id of ['abc', '0', '-1', '1.5', '99999999999', '2147483648', '%20']) {
    assertIssues(await get(service, `/accounts/${id}`, admin), ['id'], id);
  }
});

// ------------------------------------------------------------------ role

test('setRole: a user made an admin may use the admin API at once; made a user again, it may not; the same role again changes nothing', async ({ service, admin }) => {
  const account = await registerAndVerify(service, 'role.change@example.com');
  const promoted = await setRole(service, account.user.id, 'admin', admin);
  assert.is(promoted.status, 200, promoted.text);
  assert.equal(Object.keys(promoted.body).sort(), ['account', 'changed', 'success']);
  assert.equal([promoted.body.account.id, promoted.body.account.role, promoted.body.changed], [account.user.id, 'admin', true]);
  assert.equal(Object.keys(promoted.body.account).sort(), ACCOUNT_KEYS);
  assert.is((await get(service, '/overview', account)).status, 200, 'at once, on this instance');
  assert.equal(await lastAudit(service, admin.user.id), { event: 'admin.role_changed', data: { account: account.user.id, role: 'admin' } });

  const again = await setRole(service, account.user.id, 'admin', admin);
  assert.is(again.body.changed, false);
  assert.is((await lastAudit(service, admin.user.id))?.event, 'admin.role_changed');
  assert.is((await auditOf(service, admin.user.id)).filter((row) => row.event === 'admin.role_changed' && row.data?.account === account.user.id).length, 1, 'nothing recorded for no change');

  const trpc = await trpcOver(service).mutation(admin, 'admin.setRole', { id: account.user.id, role: 'user' });
  assert.is(data(trpc).account.role, 'user');
  assertError(await get(service, '/overview', account), 403, 'FORBIDDEN');
});

test('setRole: the last admin is never made a user (409 CONFLICT); two admins demoting each other at once leave one', async ({ service, admin }) => {
  const others = await service.deps.db.query<{ id: number }>(`UPDATE accounts SET role = 'user' WHERE role = 'admin' AND id <> $1 RETURNING id`, [admin.user.id]);
  try {
    const refused = await setRole(service, admin.user.id, 'user', admin);
    assertError(refused, 409, 'CONFLICT');
    assert.match(refused.body.message, 'last administrator');
    assert.is((await login(service, admin.email)).body.user.role, 'admin');

    const second = await registerAndVerify(service, 'role.second.admin@example.com');
    assert.is((await setRole(service, second.user.id, 'admin', admin)).status, 200);
    const [one, two] = await Promise.all([setRole(service, second.user.id, 'user', admin), setRole(service, admin.user.id, 'user', second)]);
    // One wins. The other is refused either by the last-admin rule (409), when both calls were
    // admitted before either changed a role, or as no longer an admin (403), when the winner's
    // change had committed before the loser was authenticated.
    const statuses = [one.status, two.status].sort();
    assert.is(statuses[0], 200);
    assert.ok(statuses[1] === 409 || statuses[1] === 403, `the loser got ${statuses[1]}`);
    const loser = one.status === 200 ? two : one;
    assert.is(loser.body.code, loser.status === 409 ? 'CONFLICT' : 'FORBIDDEN');
    const [{ n }] = await service.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM accounts WHERE role = 'admin'`);
    assert.is(n, 1);
    // The suite's admin is the admin again, whichever won.
    await service.deps.db.query(`UPDATE accounts SET role = 'admin' WHERE id = $1`, [admin.user.id]);
  } finally {
    await service.deps.db.query(`UPDATE accounts SET role = 'admin' WHERE id = ANY($1::int[])`, [others.map((row) => row.id)]);
  }
});

test('setRole refuses garbage with 400 naming the field, and changes nothing', async ({ service, admin, user }) => {
  for (const role of ['root', 'ADMIN', '', 1, null, ['admin'], { admin: true }]) {
    assertIssues(await setRole(service, user.user.id, role, admin), ['role'], JSON.stringify(role));
  }
  assertIssues(await post(service, `/accounts/${user.user.id}/role`, {}, admin), ['role'], 'missing');
  assertIssues(await post(service, `/accounts/${user.user.id}/role`, { role: 'admin', also: 'x' }, admin), ['also'], 'stray');
  assertIssues(await setRole(service, 'abc', 'admin', admin), ['id'], 'abc');
  assertError(await setRole(service, 2147483647, 'admin', admin), 404, 'NOT_FOUND');
  assert.is((await login(service, user.email)).body.user.role, 'user');
});

// ------------------------------------------------------------------ resend verification

test('resendVerification: an unconfirmed account gets a new link that confirms it; a confirmed one is 409 CONFLICT', async ({ service, admin, user }) => {
  await registerForToken(service, 'resend.me@example.com');
  const [{ id }] = await service.deps.db.query<{ id: number }>('SELECT id FROM accounts WHERE email = $1', ['resend.me@example.com']);
  const seen = service.smtp.mailsTo('resend.me@example.com').length;
  const resent = await post(service, `/accounts/${id}/resend-verification`, undefined, admin);
  assert.is(resent.status, 200, resent.text);
  assert.equal(resent.body, { success: true });
  const token = linkToken(await nextMail(service, 'resend.me@example.com', seen, /verify-email\?token=/));
  assert.is((await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token } })).status, 200);
  assert.is((await login(service, 'resend.me@example.com')).status, 200);
  assert.equal(await lastAudit(service, admin.user.id), { event: 'admin.verification_resent', data: { account: id } });

  const confirmed = await post(service, `/accounts/${user.user.id}/resend-verification`, undefined, admin);
  assertError(confirmed, 409, 'CONFLICT');
  assertError(await post(service, '/accounts/2147483647/resend-verification', undefined, admin), 404, 'NOT_FOUND');
  assertIssues(await post(service, `/accounts/${id}/resend-verification`, { to: 'evil@example.net' }, admin), ['to'], 'stray');
  const trpc = await trpcOver(service).mutation(admin, 'admin.resendVerification', { id: user.user.id });
  assert.is(trpc.body.error.data.appCode, 'CONFLICT');
});

test.run();
