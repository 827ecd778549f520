import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { AUTH, PASSWORD, bearer, registerAdmin, registerAndVerify, type Account } from './helpers/auth.ts';
import { EventReceiver } from './helpers/event-receiver.ts';
import { assertPageHeaders, createVisitor, inputValue, signedInVisitor, type PageResult, type Visitor } from './helpers/pages.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// docs/API.md, Pages (the operator's console): admins only, on the session cookie; every
// action a POST form with its CSRF token, and a code of the admin's second factor once the
// session's five minutes of step-up are over. What came from outside is escaped, garbage in
// a query or a form is a 4xx page, never a 5xx.

type Context = { service: TestService; admin: Account; user: Account; visitor: Visitor; receiver: EventReceiver };
const test = suite<Context>('pages: the operator console');

const EVIL = 'http://evil.example';
const HOSTILE = `<script>alert(1)</script>"'><img src=x onerror=alert(2)>`;
const PAGES = ['/admin', '/admin/accounts', '/admin/inbox', '/admin/events', '/admin/audit'];
const STEP_UP_MS = 5 * 60_000;

test.before(async (context) => {
  context.service = await startTestApp();
  context.receiver = await EventReceiver.start();
  context.admin = await registerAdmin(context.service, 'console.pages.admin@example.com');
  context.user = await registerAndVerify(context.service, 'console.pages.user@example.com');
  context.visitor = await signedInVisitor(context.service, context.admin.email, PASSWORD);
});
test.after(async ({ service, receiver }) => {
  await receiver?.close();
  await service?.close();
});

const roleOf = async (service: TestService, id: number) => (await service.deps.db.query<{ role: string }>('SELECT role FROM accounts WHERE id = $1', [id]))[0].role;
const endpointCount = async (service: TestService) => Number((await service.deps.db.query<{ n: string }>('SELECT count(*) AS n FROM event_endpoints'))[0].n);

/** An inbox row as intake writes it, in the state a test needs. */
async function insertDelivery(service: TestService, payload: string, state: 'dead' | 'processed' | 'ignored' = 'dead'): Promise<string> {
  const id = randomUUID();
  await service.deps.db.query(
    `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at, state, enqueued_at, processed_at, last_error)
     VALUES ($1, 'operator', '', $2, $3, $4, $5, $4, $4, $6)`,
    [id, randomUUID(), Buffer.from(payload), service.clock.now(), state, state === 'dead' ? HOSTILE : null],
  );
  return id;
}

/** What a page says as text: tags gone, entities read. */
const textOf = (html: string) => html.replace(/<[^>]*>/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

/** The hostile text came out as text: never as a tag, and never inside an attribute. */
function assertEscaped(page: PageResult, label: string) {
  assert.not.match(page.text, '<script>alert(1)', `${label}: a script tag got through`);
  assert.not.match(page.text, '<img src=x', `${label}: an img tag got through`);
  for (const [, attributes] of page.text.matchAll(/<[a-z]+\b((?:[^>"]|"[^"]*")*)>/g)) assert.not.match(attributes, 'alert(', `${label}: hostile text in an attribute`);
  assert.match(textOf(page.text), HOSTILE, `${label}: the text is shown`);
}

test('signed out: every console page is a 303 to the sign-in page and back; a form without a session changes nothing', async ({ service, user }) => {
  const visitor = createVisitor(service);
  for (const path of [...PAGES, `/admin/accounts/${user.user.id}`]) {
    const page = await visitor.get(path);
    assert.is(page.status, 303, path);
    assert.is(page.location, `/login?next=${path}`, path);
  }
  await visitor.get('/login');
  const posted = await visitor.post(`/admin/accounts/${user.user.id}/role`, { role: 'admin' });
  assert.is(posted.status, 303);
  assert.is(posted.location, '/login?next=/admin');
  const noToken = await createVisitor(service).post(`/admin/accounts/${user.user.id}/role`, { role: 'admin' });
  assert.is(noToken.status, 403);
  assert.is(await roleOf(service, user.user.id), 'user');
});

test('a signed-in user gets the 403 page on every console page and action, and nothing changes', async ({ service, user }) => {
  const visitor = await signedInVisitor(service, user.email, PASSWORD);
  for (const path of [...PAGES, `/admin/accounts/${user.user.id}`]) {
    const page = await visitor.get(path);
    assert.is(page.status, 403, path);
    assertPageHeaders(page);
    assert.match(page.text, 'For administrators only');
  }
  await visitor.get('/account');
  const posted = await visitor.post(`/admin/accounts/${user.user.id}/role`, { role: 'admin' });
  assert.is(posted.status, 403);
  assert.match(posted.text, 'For administrators only');
  assert.is(await roleOf(service, user.user.id), 'user');
  const added = await visitor.post('/admin/events/endpoints', { url: 'http://127.0.0.1:9/x' });
  assert.is(added.status, 403);
  assert.is(await endpointCount(service), 0);
});

test('an admin: a cross-site form or one without its CSRF token is refused and changes nothing', async ({ service, user, visitor }) => {
  await visitor.get(`/admin/accounts/${user.user.id}`);
  const crossSite = await visitor.post(`/admin/accounts/${user.user.id}/role`, { role: 'admin' }, { origin: EVIL });
  assert.is(crossSite.status, 403);
  assert.match(crossSite.text, 'This form could not be accepted');
  const noToken = await visitor.post(`/admin/accounts/${user.user.id}/role`, { role: 'admin' }, { csrf: null });
  assert.is(noToken.status, 403);
  const wrongToken = await visitor.post('/admin/events/endpoints', { url: 'http://127.0.0.1:9/x' }, { csrf: 'A'.repeat(43) });
  assert.is(wrongToken.status, 403);
  assert.is(await roleOf(service, user.user.id), 'user');
  assert.is(await endpointCount(service), 0);
});

test('every page renders empty, with its empty state', async ({ visitor }) => {
  const overview = await visitor.get('/admin');
  assert.is(overview.status, 200, overview.text);
  assertPageHeaders(overview);
  assert.match(overview.text, 'No event endpoint yet.');
  assert.match(overview.text, 'No admin has changed anything yet.');
  assert.match(overview.text, '<svg class="chart"');
  const none = await visitor.get('/admin/accounts?q=nobody.at.all');
  assert.is(none.status, 200);
  assert.match(none.text, 'No account matches that search.');
  const inbox = await visitor.get('/admin/inbox');
  assert.is(inbox.status, 200);
  assert.match(inbox.text, 'No delivery has come in yet.');
  const events = await visitor.get('/admin/events');
  assert.is(events.status, 200);
  assert.match(events.text, 'No endpoint yet: add one below.');
  assert.match(events.text, 'No event has been sent yet.');
  const audit = await visitor.get('/admin/audit?account_id=2147483000');
  assert.is(audit.status, 200);
  assert.match(audit.text, 'No event matches the filter on this page.');
});

test('pages with data; times in UTC in <time datetime>; accounts page by cursor', async ({ service, visitor, admin }) => {
  for (let index = 0; index < 3; index += 1) await registerAndVerify(service, `console.paging.${index}@example.com`);
  const overview = await visitor.get('/admin');
  assert.match(overview.text, /<time datetime="\d{4}-\d\d-\d\dT\d\d:00:00\.000Z">\d\d:00 UTC<\/time>/);
  const accounts = await visitor.get('/admin/accounts?q=console.');
  assert.match(accounts.text, 'console.paging.2@example.com');
  assert.match(accounts.text, /<time datetime="[^"]+Z">[^<]+ UTC<\/time>/);
  assert.match((await visitor.get('/account')).text, '<a href="/admin">Open the operator console</a>', 'an admin finds the console from the account page');
  const detail = await visitor.get(`/admin/accounts/${admin.user.id}`);
  assert.is(detail.status, 200);
  assert.match(detail.text, admin.email);
  assert.not.match(detail.text, admin.apiKey, 'no API key');
  assert.match(detail.text, 'Signed in');
  const audit = await visitor.get(`/admin/audit?account_id=${admin.user.id}`);
  assert.match(audit.text, 'account.registered');
  assert.match(audit.text, `href="/api/v1/admin/audit?account_id=${admin.user.id}"`);
  const download = await request(service.url, 'GET', `/api/v1/admin/audit?account_id=${admin.user.id}`, { headers: { cookie: `svc_token=${visitor.cookies.get('svc_token')}` } });
  assert.is(download.status, 200);
  assert.match(download.text, '"event":"account.registered"');
});

test('names, user agents, payloads and endpoint answers from outside come out escaped, never in attributes', async ({ service, visitor, receiver }) => {
  const hostile = await registerAndVerify(service, 'console.hostile@example.com', { name: HOSTILE });
  await request(service.url, 'POST', `${AUTH}/login`, { json: { email: hostile.email, password: PASSWORD }, headers: { 'user-agent': HOSTILE } });
  assertEscaped(await visitor.get('/admin/accounts?q=console.hostile'), 'search');
  assertEscaped(await visitor.get(`/admin/accounts/${hostile.user.id}`), 'account');
  assertEscaped(await visitor.get(`/admin/audit?account_id=${hostile.user.id}`), 'audit');
  const delivery = await insertDelivery(service, HOSTILE);
  assertEscaped(await visitor.get(`/admin/inbox/${delivery}`), 'inbox delivery');
  assertEscaped(await visitor.get('/admin/inbox?state=dead'), 'inbox list');

  // An endpoint whose receiver answers with markup, and a description that is markup.
  receiver.mode = 'fail';
  receiver.failBody = HOSTILE;
  await visitor.get('/admin/events');
  const added = await visitor.post('/admin/events/endpoints', { url: receiver.url, description: HOSTILE });
  assert.is(added.status, 200, added.text);
  const endpoint = (await service.deps.db.query<{ id: string }>('SELECT id FROM event_endpoints ORDER BY created_at DESC LIMIT 1'))[0].id;
  await visitor.get(`/admin/events/endpoints/${endpoint}`);
  const tested = await visitor.post(`/admin/events/endpoints/${endpoint}/test`, {});
  assert.is(tested.status, 303, tested.text);
  const deliveryPath = tested.location!;
  await eventually('the receiver answered', () => (receiver.received.length ? true : undefined), 15_000);
  const page = await eventually(
    'the failed attempt is shown',
    async () => {
      const shown = await visitor.get(deliveryPath);
      return shown.text.includes('500') && textOf(shown.text).includes(HOSTILE) ? shown : undefined;
    },
    15_000,
  );
  assertEscaped(page, 'event delivery');
  assertEscaped(await visitor.get('/admin/events'), 'events');
  receiver.mode = 'ok';
  receiver.failBody = 'receiver is down for maintenance';
  await visitor.get(`/admin/events/endpoints/${endpoint}/remove`);
  assert.is((await visitor.post(`/admin/events/endpoints/${endpoint}/remove`, { confirm: 'yes' })).status, 303);
});

test('garbage in queries, ids and form bodies is a 4xx page, never a 5xx', async ({ service, visitor, user }) => {
  const gets = [
    '/admin/accounts?cursor=abc',
    '/admin/accounts?q=' + 'x'.repeat(300),
    '/admin/accounts/abc',
    '/admin/accounts/99999999999',
    '/admin/accounts/2147483000',
    '/admin/accounts/abc/reset-mfa',
    '/admin/inbox?state=bogus',
    '/admin/inbox?since=yesterday',
    '/admin/inbox?provider=%00',
    '/admin/inbox?cursor=%22%3E%3Cscript%3E',
    `/admin/inbox/${'x'.repeat(200)}`,
    `/admin/inbox/${randomUUID()}`,
    '/admin/events?state=nope',
    '/admin/events?endpoint_id=not-a-uuid',
    '/admin/events?type=<script>',
    `/admin/events/endpoints/${randomUUID()}`,
    `/admin/events/endpoints/${randomUUID()}/remove`,
    '/admin/events/deliveries/not-a-uuid',
    `/admin/events/deliveries/${randomUUID()}`,
    '/admin/audit?account_id=-1',
    '/admin/audit?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z',
    '/admin/audit?type=made.up',
    '/admin/audit?cursor=!!!',
  ];
  for (const path of gets) {
    const page = await visitor.get(path);
    assert.ok(page.status >= 400 && page.status < 500, `${path}: ${page.status}`);
    assertPageHeaders(page);
    assert.not.match(page.text, '<script>', path);
  }
  // A filter the list refuses is said under its field, the list empty.
  for (const [path, field] of [
    ['/admin/inbox?since=yesterday', 'since'],
    ['/admin/inbox?state=bogus', 'state'],
    ['/admin/audit?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', 'since'],
    ['/admin/audit?account_id=-1', 'account_id'],
    ['/admin/audit?type=made.up', 'type'],
  ]) {
    const page = await visitor.get(path);
    assert.is(page.status, 400, path);
    assert.match(page.text, new RegExp(`id="${field}"[^>]*aria-invalid="true"`), `${path}: the field is marked`);
    assert.match(page.text, `<p class="field-error" id="${field}-error">`, `${path}: its message is under it`);
  }
  await visitor.get('/admin');
  const posts: Array<[string, Record<string, string>]> = [
    [`/admin/accounts/${user.user.id}/role`, { role: 'root' }],
    ['/admin/accounts/abc/role', { role: 'admin' }],
    ['/admin/accounts/abc/reset-mfa', {}],
    [`/admin/inbox/${randomUUID()}/replay`, {}],
    ['/admin/inbox/replay', { provider: 'nope', state: 'received' }],
    ['/admin/inbox/replay', { since: 'soon' }],
    ['/admin/events/endpoints', { url: 'javascript:alert(1)' }],
    ['/admin/events/endpoints', { url: 'http://127.0.0.1:9/x', description: 'x'.repeat(600) }],
    [`/admin/events/endpoints/${randomUUID()}/enabled`, { enabled: 'maybe' }],
    [`/admin/events/endpoints/${randomUUID()}/rotate`, { grace_seconds: '-5' }],
    [`/admin/events/endpoints/${randomUUID()}/test`, {}],
    ['/admin/events/endpoints/nope/remove', { confirm: 'yes' }],
    [`/admin/events/deliveries/${randomUUID()}/retry`, {}],
  ];
  for (const [path, fields] of posts) {
    const page = await visitor.post(path, fields);
    assert.ok(page.status >= 400 && page.status < 500, `${path}: ${page.status} ${page.text.slice(0, 300)}`);
    assertPageHeaders(page);
  }
  const repeated = await visitor.post(`/admin/accounts/${user.user.id}/role`, {}, { body: `csrf_token=${visitor.csrf}&role=admin&role=user` });
  assert.is(repeated.status, 400);
  const json = await visitor.post(`/admin/accounts/${user.user.id}/role`, {}, { body: '{"role":"admin"}', headers: { 'content-type': 'application/json' } });
  assert.is(json.status, 415);
  assert.is(await roleOf(service, user.user.id), 'user');
  assert.is(await endpointCount(service), 0);
});

test('actions: role, resend verification, add an endpoint (its secret once), remove it after a confirmation', async ({ service, visitor, user }) => {
  await visitor.get(`/admin/accounts/${user.user.id}`);
  const made = await visitor.post(`/admin/accounts/${user.user.id}/role`, { role: 'admin' });
  assert.is(made.status, 303);
  assert.is(made.location, `/admin/accounts/${user.user.id}?done=role-admin`);
  assert.is(await roleOf(service, user.user.id), 'admin');
  assert.match((await visitor.get(made.location!)).text, 'The account is now an admin.');
  assert.is((await visitor.post(`/admin/accounts/${user.user.id}/role`, { role: 'user' })).status, 303);
  // Resetting the second factor removes it: the account page links to a confirmation, and the POST needs it.
  assert.match((await visitor.get(`/admin/accounts/${user.user.id}`)).text, 'No second factor to reset.');
  const confirmReset = await visitor.get(`/admin/accounts/${user.user.id}/reset-mfa`);
  assert.is(confirmReset.status, 200);
  assert.match(confirmReset.text, 'Reset the second factor?');
  assert.is(inputValue(confirmReset.text, 'confirm'), 'yes');
  const unconfirmed = await visitor.post(`/admin/accounts/${user.user.id}/reset-mfa`, {});
  assert.is(unconfirmed.status, 400);
  assert.match(unconfirmed.text, 'Resetting asks for its confirmation page. Nothing was changed.');
  const verified = await visitor.post(`/admin/accounts/${user.user.id}/resend-verification`, {});
  assert.is(verified.status, 409);
  assert.match(verified.text, 'The address is confirmed already');

  await visitor.get('/admin/events');
  const refused = await visitor.post('/admin/events/endpoints', { url: 'ftp://example.com/x', description: 'kept' });
  assert.is(refused.status, 400);
  assert.match(refused.text, /id="add-url-error"/);
  assert.is(inputValue(refused.text, 'description'), 'kept');
  const added = await visitor.post('/admin/events/endpoints', { url: 'http://127.0.0.1:9/once', [`event_account.created`]: 'on' });
  assert.is(added.status, 200, added.text);
  const secret = /<code class="secret" id="endpoint-secret">(whsec_[A-Za-z0-9+/=]+)<\/code>/.exec(added.text)?.[1];
  assert.ok(secret, 'the secret is shown');
  const [{ id }] = await service.deps.db.query<{ id: string }>(`SELECT id FROM event_endpoints WHERE url = 'http://127.0.0.1:9/once'`);
  const page = await visitor.get(`/admin/events/endpoints/${id}`);
  assert.is(page.status, 200);
  assert.not.match(page.text, secret, 'shown once only');
  assert.match(page.text, 'account.created');
  const rotated = await visitor.post(`/admin/events/endpoints/${id}/rotate`, { grace_seconds: '3600' });
  assert.is(rotated.status, 200);
  assert.match(rotated.text, 'New signing secret');
  assert.is((await visitor.post(`/admin/events/endpoints/${id}/enabled`, { enabled: 'false' })).location, `/admin/events/endpoints/${id}?done=disabled`);
  const toDisabled = await visitor.post(`/admin/events/endpoints/${id}/test`, {});
  assert.is(toDisabled.status, 409);
  assert.match(toDisabled.text, 'The endpoint is disabled');
  // Removing goes through its confirmation page; the form of the endpoint page is only a link to it.
  assert.match(page.text, `href="/admin/events/endpoints/${id}/remove"`);
  const confirm = await visitor.get(`/admin/events/endpoints/${id}/remove`);
  assert.is(confirm.status, 200);
  assert.match(confirm.text, 'Remove the endpoint?');
  assert.is(inputValue(confirm.text, 'confirm'), 'yes');
  const removed = await visitor.post(`/admin/events/endpoints/${id}/remove`, { confirm: 'yes' });
  assert.is(removed.location, '/admin/events?done=removed');
  assert.is(await endpointCount(service), 0);
});

test('a list pages by cursor: the next page by its link, then the way back to the first', async ({ service, visitor }) => {
  for (let index = 0; index < 51; index += 1) await insertDelivery(service, `{"n":${index}}`, 'processed');
  const first = await visitor.get('/admin/inbox?provider=operator&state=processed');
  assert.is(first.status, 200);
  assert.is([...first.text.matchAll(/<tr><td><a href="\/admin\/inbox\//g)].length, 50);
  const next = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(first.text)?.[1].replace(/&amp;/g, '&');
  assert.ok(next, 'a link to the next page');
  assert.match(next, /^\/admin\/inbox\?provider=operator&state=processed&cursor=/);
  const second = await visitor.get(next);
  assert.is([...second.text.matchAll(/<tr><td><a href="\/admin\/inbox\//g)].length, 1);
  assert.match(second.text, '<a href="/admin/inbox?provider=operator&amp;state=processed">First page</a>');
  assert.match(second.text, 'Last page');
});

test('inbox: one delivery replayed, dead ones replayed by filter', async ({ service, visitor }) => {
  const id = await insertDelivery(service, '{"event_type":"nothing.here"}');
  await insertDelivery(service, '{"event_type":"nothing.either"}');
  const shown = await visitor.get(`/admin/inbox/${id}`);
  assert.is(shown.status, 200);
  assert.match(shown.text, '<pre class="payload">{&quot;event_type&quot;:&quot;nothing.here&quot;}</pre>');
  const replayed = await visitor.post(`/admin/inbox/${id}/replay`, {});
  assert.is(replayed.location, `/admin/inbox/${id}?done=replayed`);
  await visitor.get('/admin/inbox?state=dead&provider=operator');
  const all = await visitor.post('/admin/inbox/replay', { provider: 'operator', state: 'dead' });
  assert.is(all.status, 303);
  assert.match(all.location!, /^\/admin\/inbox\?provider=operator&state=dead&replayed=\d+$/);
  assert.match((await visitor.get(all.location!)).text, /\d+ deliveries were applied again\./);
});

test('step-up: with a second factor, a change after the five minutes asks for the code; a wrong one is said under the field', async ({ service }) => {
  const admin = await registerAdmin(service, 'console.stepup@example.com');
  const target = await registerAndVerify(service, 'console.stepup.target@example.com');
  const setup = await request(service.url, 'POST', `${AUTH}/mfa/totp/setup`, { json: { password: PASSWORD }, headers: bearer(admin.token) });
  const secret = setup.body.secret as string;
  const code = () => totpCodeAt(secret, service.clock.now());
  assert.is((await request(service.url, 'POST', `${AUTH}/mfa/totp/enable`, { json: { code: code() }, headers: bearer(admin.token) })).status, 200);
  service.clock.advance(30_000);
  const visitor = createVisitor(service);
  await visitor.get('/login');
  const signIn = await visitor.post('/login', { email: admin.email, password: PASSWORD });
  assert.is(signIn.status, 303);
  await visitor.get('/login/mfa');
  const second = await visitor.post('/login/mfa', { code: code() });
  assert.is(second.status, 303, second.text);
  service.clock.advance(STEP_UP_MS + 30_000);

  const page = await visitor.get(`/admin/accounts/${target.user.id}`);
  assert.match(page.text, 'id="step-up-code"', 'the page asks for the code up front');
  assert.not.match(page.text, 'id="role-code"');
  const without = await visitor.post(`/admin/accounts/${target.user.id}/role`, { role: 'admin' });
  assert.is(without.status, 403);
  assert.match(without.text, 'Enter a code from your authenticator app or a recovery code to confirm.');
  assert.is(inputValue(without.text, 'role'), 'admin', 'the form is carried over');
  const wrong = await visitor.post(`/admin/accounts/${target.user.id}/role`, { role: 'admin', code: '000000' });
  assert.is(wrong.status, 400);
  assert.match(wrong.text, /<input id="confirm-code"[^>]*aria-invalid="true"[^>]*aria-describedby="confirm-code-error"/);
  assert.match(wrong.text, 'That code is wrong');
  assert.is(await roleOf(service, target.user.id), 'user');
  const right = await visitor.post(`/admin/accounts/${target.user.id}/role`, { role: 'admin', code: code() });
  assert.is(right.status, 303, right.text);
  assert.is(await roleOf(service, target.user.id), 'admin');
  // Stepped up: the next change within the five minutes asks for nothing.
  const next = await visitor.get(`/admin/accounts/${target.user.id}`);
  assert.not.match(next.text, 'id="step-up-code"');
  assert.is((await visitor.post(`/admin/accounts/${target.user.id}/role`, { role: 'user' })).status, 303);
  assert.is(await roleOf(service, target.user.id), 'user');

  // The code given up front, in the page's box: a wrong one under its field, a right one back to the page.
  service.clock.advance(STEP_UP_MS + 30_000);
  await visitor.get(`/admin/inbox?state=dead`);
  const wrongBox = await visitor.post('/admin/step-up', { back: '/admin/inbox?state=dead', code: '111111' });
  assert.is(wrongBox.status, 400);
  assert.match(wrongBox.text, 'id="confirm-code-error"');
  assert.is(inputValue(wrongBox.text, 'back'), '/admin/inbox?state=dead');
  const rightBox = await visitor.post('/admin/step-up', { back: '/admin/inbox?state=dead', code: code() });
  assert.is(rightBox.location, '/admin/inbox?state=dead');
  assert.not.match((await visitor.get('/admin/inbox')).text, 'id="step-up-code"');
  const elsewhere = await visitor.post('/admin/step-up', { back: '//evil.example/admin', code: '' });
  assert.is(elsewhere.location, '/admin', 'never back to another site');
});

test('MFA_REQUIRED_ROLES=admin: an admin without a second factor sees only the prompt to set one up', async () => {
  const service = await startTestApp({ MFA_REQUIRED_ROLES: 'admin' });
  try {
    const admin = await registerAdmin(service, 'console.nofactor@example.com');
    const target = await registerAndVerify(service, 'console.nofactor.target@example.com');
    const visitor = await signedInVisitor(service, admin.email, PASSWORD);
    for (const path of [...PAGES, `/admin/accounts/${target.user.id}`]) {
      const page = await visitor.get(path);
      assert.is(page.status, 403, path);
      assert.match(page.text, 'Set up a second factor first');
      assert.not.match(page.text, target.email, 'nothing of the console is shown');
    }
    await visitor.get('/account');
    const posted = await visitor.post(`/admin/accounts/${target.user.id}/role`, { role: 'admin' });
    assert.is(posted.status, 403);
    assert.match(posted.text, 'Set up a second factor first');
    assert.is(await roleOf(service, target.user.id), 'user');
  } finally {
    await service.close();
  }
});

test.run();
