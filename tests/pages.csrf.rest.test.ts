import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, bearer, me, nextMail, registerAndVerify, registerForToken, type Account } from './helpers/auth.ts';
import { assertPageHeaders, createVisitor, FORM_TYPE, signedInVisitor, type PageResult, type Visitor } from './helpers/pages.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';

// docs/API.md, Pages: every POST form carries a CSRF token tied to the visitor (and its
// session); without a valid one, or from another site, it is a 403 page and nothing changes.
// Garbage bodies are a 4xx page, never a 5xx.

type Context = { service: TestService; victim: Account; visitor: Visitor; session: string; tokens: { verify: string; reset: string; confirm: string } };
const test = suite<Context>('pages: CSRF, origin checks and garbage forms');

const EVIL = 'http://evil.example';
/** The same host on another port: same site, another origin. */
const anotherPortOf = (url: string) => Object.assign(new URL(url), { port: '8443' }).origin;

test.before(async (context) => {
  const service = (context.service = await startTestApp());
  context.victim = await registerAndVerify(service, 'csrf.victim@example.com');
  context.visitor = await signedInVisitor(service, context.victim.email, PASSWORD);
  context.session = context.visitor.cookies.get('svc_token')!;
  // Live tokens of every kind, so that a form getting through would have an effect to see.
  const verify = await registerForToken(service, 'csrf.unverified@example.com');
  const seen = service.smtp.mailsTo(context.victim.email).length;
  assert.is((await request(service.url, 'POST', `${AUTH}/password/forgot`, { json: { email: context.victim.email } })).status, 200);
  const reset = linkToken(await nextMail(service, context.victim.email, seen, /reset-password/), '/reset-password');
  const changed = await request(service.url, 'POST', `${AUTH}/email/change`, { json: { new_email: 'csrf.moved@example.com', password: PASSWORD }, headers: bearer(context.victim.token) });
  assert.is(changed.status, 200);
  const confirm = linkToken(await nextMail(service, 'csrf.moved@example.com', 0, /confirm-email/), '/confirm-email');
  context.tokens = { verify, reset, confirm };
});
test.after(async ({ service }) => {
  await service?.close();
});

/** Every page form with fields that would work, the signed-in ones last. */
function forms({ tokens, session: token }: Context): Array<[string, Record<string, string>]> {
  const session = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid;
  return [
    ['/register', { name: 'Mallory', email: 'csrf.new@example.com', password: PASSWORD }],
    ['/login', { email: 'csrf.victim@example.com', password: PASSWORD }],
    ['/forgot-password', { email: 'csrf.victim@example.com' }],
    ['/resend-verification', { email: 'csrf.unverified@example.com' }],
    ['/verify-email', { token: tokens.verify }],
    ['/reset-password', { token: tokens.reset, password: 'taken over password' }],
    ['/confirm-email', { token: tokens.confirm }],
    ['/account/api-key', {}],
    ['/account/api-key/rotate', { grace_seconds: '0' }],
    ['/account/password', { current_password: PASSWORD, new_password: 'taken over password' }],
    ['/account/email', { new_email: 'csrf.attacker@example.com', password: PASSWORD }],
    ['/account/profile', { name: 'Mallory', company: 'Evil Corp' }],
    ['/account/sessions/revoke', { session_id: session }],
    ['/account/sessions/revoke-others', {}],
    ['/account/delete', { password: PASSWORD }],
    ['/logout', {}],
  ];
}

/** What any form could change: accounts, sessions, mailed tokens, the activity log, queued reset mails. */
async function snapshot(service: TestService): Promise<string> {
  const [row] = await service.deps.db.query<{ state: string }>(`
    SELECT json_build_object(
      'accounts', (SELECT json_agg(json_build_array(id, email, password_hash, name, company, email_verified, api_key_hash) ORDER BY id) FROM accounts),
      'sessions', (SELECT json_agg(json_build_array(id, revoked_at) ORDER BY id) FROM sessions),
      'tokens', (SELECT json_agg(json_build_array(id, purpose, used_at) ORDER BY id) FROM email_tokens),
      'events', (SELECT count(*) FROM audit_events),
      'resets', (SELECT count(*) FROM pgboss.job WHERE name = 'password-reset')
    )::text AS state`);
  return row.state;
}

function assertRefused(answer: PageResult, what: string): void {
  assert.is(answer.status, 403, `${what}: ${answer.status} ${answer.text.slice(0, 200)}`);
  assertPageHeaders(answer);
  assert.match(answer.text, 'Nothing was changed.');
  assert.not.ok(answer.headers.getSetCookie().some((line) => line.startsWith('svc_token=')), `${what} set a session cookie`);
  assert.is(answer.location, undefined);
}

test('no token, a wrong one, another visitor\'s, or a token from before signing in: 403 and nothing changed', async (context) => {
  const { service, visitor, victim } = context;
  const stranger = createVisitor(service);
  const strangersToken = (await stranger.get('/login')).csrf!;
  // The same browser before it signed in: its token then was for no session.
  const relogged = createVisitor(service);
  const anonymousToken = (await relogged.get('/login')).csrf!;
  assert.is((await relogged.post('/login', { email: victim.email, password: PASSWORD })).status, 303);
  const before = await snapshot(service);
  for (const path of ['/account/password', '/account/delete', '/logout']) {
    assertRefused(await relogged.post(path, { current_password: PASSWORD, new_password: 'taken over password', password: PASSWORD }, { csrf: anonymousToken }), `${path} with the token from before signing in`);
  }
  await visitor.get('/account');
  const victimsToken = visitor.csrf!;
  for (const [path, fields] of forms(context)) {
    assertRefused(await visitor.post(path, fields, { csrf: null }), `${path} without a token`);
    assertRefused(await visitor.post(path, fields, { csrf: 'A'.repeat(43) }), `${path} with a made-up token`);
    assertRefused(await visitor.post(path, fields, { csrf: victimsToken.slice(0, -1) }), `${path} with a token cut short`);
    assertRefused(await visitor.post(path, fields, { csrf: strangersToken }), `${path} with another visitor's token`);
    assertRefused(await visitor.post(path, fields, { csrf: anonymousToken }), `${path} with a token of another browser`);
  }
  assert.is(await snapshot(service), before);
  assert.is((await visitor.get('/account')).status, 200, 'still signed in');
});

test('a valid token from another site (Origin, or Sec-Fetch-Site without one, or Origin null): 403 and nothing changed', async (context) => {
  const { service, visitor } = context;
  const before = await snapshot(service);
  for (const [path, fields] of forms(context)) {
    await visitor.get('/account');
    assertRefused(await visitor.post(path, fields, { origin: EVIL }), `${path} from ${EVIL}`);
    assertRefused(await visitor.post(path, fields, { origin: anotherPortOf(service.url) }), `${path} from another origin of this host`);
    assertRefused(await visitor.post(path, fields, { origin: 'null' }), `${path} from an opaque origin`);
    for (const site of ['cross-site', 'same-site']) {
      assertRefused(await visitor.post(path, fields, { origin: 'null', headers: { 'sec-fetch-site': site } }), `${path} from an opaque origin, ${site}`);
    }
    assertRefused(await visitor.post(path, fields, { origin: null, headers: { 'sec-fetch-site': 'cross-site' } }), `${path} cross-site without Origin`);
  }
  assert.is(await snapshot(service), before);
});

test('a visitor without its cookie is refused, and the refusal gives it one so that the form works once reloaded', async (context) => {
  const { visitor } = context;
  await visitor.get('/account');
  const visitorId = visitor.cookies.get('svc_visitor')!;
  visitor.cookies.delete('svc_visitor');
  const refused = await visitor.post('/account/api-key', {});
  assertRefused(refused, 'no visitor cookie');
  const fresh = visitor.cookies.get('svc_visitor');
  assert.ok(fresh && fresh !== visitorId);
  await visitor.get('/account');
  assert.is((await visitor.post('/account/api-key', {})).status, 200);
});

test('the same request with the page\'s own token and Origin goes through (the refusals above were the check, not a broken form)', async (context) => {
  const { service, visitor, victim } = context;
  await visitor.get('/account');
  const key = await visitor.post('/account/api-key', {});
  assert.is(key.status, 200);
  assert.match(key.text, victim.apiKey);
  // No Origin and no Sec-Fetch-Site (an old browser): the token alone decides.
  await visitor.get('/account');
  assert.is((await visitor.post('/account/api-key', {}, { origin: null })).status, 200);
  // What Chromium sends from our own page under `Referrer-Policy: no-referrer`.
  await visitor.get('/account');
  assert.is((await visitor.post('/account/api-key', {}, { origin: 'null', headers: { 'sec-fetch-site': 'same-origin' } })).status, 200);
  assert.is((await me(service, bearer(victim.apiKey))).status, 200);
});

/** A raw form body with this visitor's current token. */
const withToken = (visitor: Visitor, body: string) => `csrf_token=${encodeURIComponent(visitor.csrf!)}&${body}`;

test('garbage on every form: wrong type, too large, repeated or odd fields, control characters: a 4xx page, never a 5xx', async (context) => {
  const { service } = context;
  // A visitor of its own: the harmless forms (sign out, sign out elsewhere) do their job.
  const account = await registerAndVerify(service, 'csrf.garbage@example.com');
  const visitor = await signedInVisitor(service, account.email, PASSWORD);
  const before = await snapshot(service);
  for (const [path] of forms(context)) {
    await visitor.get('/account');
    const cases: Array<[string, Record<string, string>, string, number[]]> = [
      ['JSON', { 'content-type': 'application/json' }, JSON.stringify({ csrf_token: visitor.csrf }), [415]],
      ['text', { 'content-type': 'text/plain' }, withToken(visitor, 'email=a'), [415]],
      ['multipart', { 'content-type': 'multipart/form-data; boundary=x' }, '--x--', [415]],
      ['latin-1', { 'content-type': `${FORM_TYPE}; charset=latin1` }, withToken(visitor, 'email=a'), [415]],
      ['oversized', {}, withToken(visitor, `email=${'a'.repeat(20 * 1024)}`), [413]],
      ['repeated field', {}, withToken(visitor, 'email=a@example.com&email=b@example.com'), [400]],
      ['repeated token', {}, `${withToken(visitor, '')}csrf_token=${encodeURIComponent(visitor.csrf!)}`, [400]],
      ['NUL', {}, withToken(visitor, 'email=a%00b&password=x%00y&token=t%00&session_id=%00'), [400]],
      ['line break', {}, withToken(visitor, 'name=a%0d%0aSet-Cookie:%20x'), [400]],
      ['too many fields', {}, withToken(visitor, Array.from({ length: 40 }, (_, i) => `f${i}=x`).join('&')), [400]],
    ];
    for (const [what, headers, body, statuses] of cases) {
      const answer = await visitor.post(path, {}, { body, headers });
      assert.ok(statuses.includes(answer.status), `${path}, ${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
      assertPageHeaders(answer);
    }
    // Odd but well-formed: arrays and objects in qs syntax, broken percent-encoding, fields missing.
    for (const body of ['email[]=a&password[]=b&token[0]=c&grace_seconds[]=1', 'email=%E0%A4%A&token=%zz&password=%', 'unrelated=1']) {
      const answer = await visitor.post(path, {}, { body: withToken(visitor, body) });
      assert.ok(answer.status < 500, `${path}, ${body}: ${answer.status}`);
      // Forms without fields to get wrong (sign out, sign out elsewhere) just do their job.
      if (answer.status === 303) assert.ok(['/login', '/account?done=others'].includes(answer.location!), `${path}: ${answer.location}`);
      else assertPageHeaders(answer);
    }
  }
  // The last two loops posted real tokens with nothing else: only the harmless forms did
  // anything, to this visitor's own sessions, and its account has no pending link to void.
  const after = JSON.parse(await snapshot(service));
  const was = JSON.parse(before);
  assert.equal(after.accounts, was.accounts);
  assert.equal(after.tokens, was.tokens);
});

test('the log holds no password, session token, mailed token or API key', async ({ service, victim, visitor, session, tokens }) => {
  // A form of its own, refused, so that a page request is in the log whatever ran before.
  await visitor.get('/account');
  await visitor.post('/account/password', { current_password: PASSWORD, new_password: 'taken over password' }, { csrf: null });
  const text = service.logs.text();
  const secrets = [PASSWORD, 'taken over password', victim.apiKey, victim.token, session, tokens.verify, tokens.reset, tokens.confirm];
  for (const secret of secrets) assert.not.ok(text.includes(secret), `the log contains ${secret.slice(0, 8)}…`);
  assert.ok(service.logs.lines.some((line) => line.includes('"path":"/account/password"')), 'the page requests are logged (by path)');
});

test.run();
