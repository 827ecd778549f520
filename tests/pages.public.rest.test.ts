import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, bearer, me, nextMail, registerAndVerify, registerForToken } from './helpers/auth.ts';
import { assertPageHeaders, createVisitor, inputValue, PAGE_CSP, signedInVisitor } from './helpers/pages.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';

// The pages anyone can open (docs/API.md, Pages): register, sign in and out, forgotten
// password, a new confirmation link; their headers and their stylesheet.

const test = suite<{ service: TestService; secrets: Set<string> }>('pages: register, login, logout, forgot password, headers');

test.before(async (context) => {
  context.service = await startTestApp();
  context.secrets = new Set([PASSWORD, 'a brand new password', 'not the password', 'wrong password']);
});
test.after(async ({ service }) => {
  await service?.close();
});

const PUBLIC_PAGES = ['/register', '/login', '/forgot-password', '/resend-verification', '/verify-email?token=abc', '/reset-password?token=abc', '/confirm-email?token=abc'];

/**
 * Every visible input has a `<label for>` naming it; there is no inline script or style. Only
 * /login loads a script (files of the site), for its passkey button; every page works without it.
 */
function assertAccessibleWithoutScript(html: string, path: string): void {
  const scripts = [...html.matchAll(/<script\b[^>]*>/gi)].map(([tag]) => tag);
  for (const tag of scripts) assert.match(tag, /^<script src="\/assets\/[\w.-]+\.js" defer>$/, `${path} has an inline script`);
  assert.ok(!scripts.length || path === '/login', `${path} has a script`);
  assert.not.match(html, /\sstyle=/i, `${path} has an inline style`);
  assert.not.match(html, /\son[a-z]+=/i, `${path} has an event handler attribute`);
  for (const [input] of html.matchAll(/<(?:input|select)\b[^>]*>/g)) {
    if (input.includes('type="hidden"')) continue;
    const id = /\bid="([^"]+)"/.exec(input)?.[1];
    assert.ok(id, `${path}: an input without id: ${input}`);
    assert.match(html, `<label for="${id}">`, `${path}: no label for ${id}`);
  }
  assert.match(html, '<meta name="viewport" content="width=device-width, initial-scale=1"/>');
}

test('every page is HTML with the CSP, no-store, no-referrer, DENY framing, and no CORS headers even when asked', async ({ service }) => {
  for (const path of PUBLIC_PAGES) {
    const page = await request(service.url, 'GET', path, { headers: { origin: 'http://elsewhere.example' } });
    assert.is(page.status, 200, `${path}: ${page.text}`);
    assertPageHeaders(page);
    assertAccessibleWithoutScript(page.text, path);
    assert.match(page.text, /<link rel="stylesheet" href="\/assets\/gatehouse\.[0-9a-f]{12}\.css"\/>/);
    const preflight = await request(service.url, 'OPTIONS', path.split('?')[0], {
      headers: { origin: 'http://elsewhere.example', 'access-control-request-method': 'POST' },
    });
    for (const name of preflight.headers.keys()) assert.not.ok(name.startsWith('access-control-'), `${path} preflight sent ${name}`);
  }
});

test('the stylesheet: under its hashed name cached for a year, under its plain name revalidated by ETag', async ({ service }) => {
  const page = await request(service.url, 'GET', '/login');
  const href = /href="(\/assets\/gatehouse\.[0-9a-f]{12}\.css)"/.exec(page.text)![1];
  const hashed = await request(service.url, 'GET', href);
  assert.is(hashed.status, 200);
  assert.match(hashed.headers.get('content-type') ?? '', 'text/css');
  assert.is(hashed.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.match(hashed.text, '.card');
  const plain = await request(service.url, 'GET', '/assets/gatehouse.css');
  assert.is(plain.text, hashed.text);
  assert.is(plain.headers.get('cache-control'), 'no-cache');
  const etag = plain.headers.get('etag')!;
  assert.ok(href.includes(etag.replace(/"/g, '')), 'the ETag is the hash in the URL');
  assert.is((await request(service.url, 'GET', '/assets/gatehouse.css', { headers: { 'if-none-match': etag } })).status, 304);
  assert.is((await request(service.url, 'GET', '/assets/gatehouse.000000000000.css')).status, 404);
});

test('register: a form, then "check your inbox"; the mail links to the confirmation page, which confirms', async ({ service, secrets }) => {
  const visitor = createVisitor(service);
  const form = await visitor.get('/register');
  assert.match(form.text, '<form method="post" action="/register">');
  assert.ok(form.csrf);
  const email = 'page.register@example.com';
  const done = await visitor.post('/register', { name: 'Ada Page', email, password: PASSWORD, company: 'Engines' });
  assert.is(done.status, 200, done.text);
  assertPageHeaders(done);
  assert.match(done.text, 'Check your inbox');
  assert.match(done.text, email);
  assert.not.match(done.text, PASSWORD);

  const token = linkToken(await nextMail(service, email, 0));
  secrets.add(token);
  const confirmPage = await visitor.get(`/verify-email?token=${token}`);
  assert.is(inputValue(confirmPage.text, 'token'), token);
  const confirmed = await visitor.post('/verify-email', { token });
  assert.is(confirmed.status, 200);
  assert.match(confirmed.text, /confirmed/i);
  const [row] = await service.deps.db.query<{ name: string; company: string; email_verified: boolean }>('SELECT name, company, email_verified FROM accounts WHERE email = $1', [email]);
  assert.equal(row, { name: 'Ada Page', company: 'Engines', email_verified: true });

  // A taken address gets the very same page (and its owner a notice, not a second account).
  const again = createVisitor(service);
  await again.get('/register');
  const taken = await again.post('/register', { name: 'Someone', email, password: 'another password' });
  assert.is(taken.status, 200);
  assert.match(taken.text, 'Check your inbox');
});

test('register with bad fields: 400, a message under each field, the values kept but never the password', async ({ service }) => {
  const visitor = createVisitor(service);
  await visitor.get('/register');
  const refused = await visitor.post('/register', { name: '', email: 'not an address', password: 'short', company: 'Acme <b>' });
  assert.is(refused.status, 400);
  assertPageHeaders(refused);
  assert.match(refused.text, /<p class="field-error" id="name-error">Enter your name\.<\/p>/);
  assert.match(refused.text, /id="email-error">E-mail address must be a bare e-mail address/);
  assert.match(refused.text, /id="password-error">Password must be at least 8 characters\.<\/p>/);
  assert.match(refused.text, /<input id="email" name="email"[^>]*value="not an address"/);
  assert.is(inputValue(refused.text, 'company'), 'Acme <b>');
  assert.not.match(refused.text, '<b>');
  assert.is(inputValue(refused.text, 'password'), undefined);
  assert.match(refused.text, /aria-invalid="true"/);
  const [{ count }] = await service.deps.db.query<{ count: number }>("SELECT count(*)::int AS count FROM accounts WHERE email = 'not an address'");
  assert.is(count, 0);
});

test('login: 303 to /account with svc_token and svc_device set as the REST login sets them; the cookie works on the API', async ({ service, secrets }) => {
  const account = await registerAndVerify(service, 'page.login@example.com');
  const visitor = createVisitor(service);
  const form = await visitor.get('/login');
  assert.match(form.text, /<input id="email" name="email"[^>]*autocomplete="username"/);
  const answer = await visitor.post('/login', { email: account.email, password: account.password });
  assert.is(answer.status, 303);
  assert.is(answer.location, '/account');
  const cookies = answer.headers.getSetCookie();
  const session = cookies.find((line) => line.startsWith('svc_token='))!;
  assert.match(session, /^svc_token=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
  assert.ok(cookies.some((line) => /^svc_device=d1\.[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=31536000$/.test(line)), cookies.join('\n'));
  secrets.add(visitor.cookies.get('svc_token')!).add(visitor.cookies.get('svc_device')!).add(account.apiKey);
  const viaApi = await me(service, { cookie: `svc_token=${visitor.cookies.get('svc_token')}` });
  assert.is(viaApi.status, 200);
  assert.is(viaApi.body.user.email, account.email);

  const [event] = await service.deps.db.query<{ user_agent: string }>(
    "SELECT user_agent FROM audit_events WHERE account_id = $1 AND event = 'login.succeeded' ORDER BY id DESC LIMIT 1",
    [account.user.id],
  );
  assert.ok(event, 'the login is in the activity log, like any other');
  assert.is((await visitor.get('/login')).location, '/account', 'signed in, the login page sends on to the account');
});

test('login refused: a wrong password is 401 with a plain message and the address kept; unverified is 403 with a resend form', async ({ service }) => {
  const account = await registerAndVerify(service, 'page.wrong@example.com');
  const visitor = createVisitor(service);
  await visitor.get('/login?next=/account');
  const wrong = await visitor.post('/login', { email: account.email, password: 'not the password', next: '/account' });
  assert.is(wrong.status, 401);
  assert.match(wrong.text, 'The e-mail address or password is wrong.');
  assert.is(inputValue(wrong.text, 'email'), account.email);
  assert.is(inputValue(wrong.text, 'next'), '/account');
  assert.not.match(wrong.text, 'not the password');
  assert.not.ok(visitor.cookies.has('svc_token'));

  const email = 'page.unverified@example.com';
  await registerForToken(service, email);
  const unverified = await visitor.post('/login', { email, password: PASSWORD });
  assert.is(unverified.status, 403);
  assert.match(unverified.text, 'Confirm your e-mail address first');
  assert.match(unverified.text, '<form method="post" action="/resend-verification">');
  const seen = service.smtp.mailsTo(email).length;
  const resent = await visitor.post('/resend-verification', { email });
  assert.is(resent.status, 200);
  assert.match(resent.text, 'Check your inbox');
  const fresh = linkToken(await nextMail(service, email, seen));
  assert.is((await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token: fresh } })).status, 200);
  assert.is((await visitor.post('/login', { email, password: PASSWORD })).status, 303);
});

test('next: a same-site path is followed; anything that could leave the site goes to /account instead', async ({ service }) => {
  const account = await registerAndVerify(service, 'page.next@example.com');
  const signIn = async (next: string) => {
    const visitor = createVisitor(service);
    await visitor.get('/login');
    return visitor.post('/login', { email: account.email, password: account.password, next });
  };
  assert.is((await signIn('/account?done=password')).location, '/account?done=password');
  assert.is((await signIn('/account/../login')).location, '/login');
  const attempts = ['//evil.example', '//evil.example/account', '/\\evil.example', '/\\/evil.example', '/.//evil.example', '/a/..//evil.example',
    'http://evil.example', 'https:evil.example', 'javascript:alert(1)', 'evil.example', 'account', '', ' /account', '/account evil', '/caf\u00e9'];
  for (const next of attempts) {
    const answer = await signIn(next);
    assert.is(answer.status, 303, next);
    assert.is(answer.location, '/account', `next=${JSON.stringify(next)} went to ${answer.location}`);
  }
  for (const next of ['/\t/evil.example', '/\n/evil.example', '/\r\n//evil.example']) {
    const answer = await signIn(next);
    assert.is(answer.status, 400, `a control character in next is refused: ${JSON.stringify(next)}`);
    assert.is(answer.location, undefined);
  }
  const shown = await request(service.url, 'GET', `/login?next=${encodeURIComponent('//evil.example')}`);
  assert.is(inputValue(shown.text, 'next'), undefined, 'an unsafe next is not even put in the form');
  const kept = await request(service.url, 'GET', '/login?next=/account');
  assert.is(inputValue(kept.text, 'next'), '/account');
});

test('logout: revokes the session, clears the cookie, 303 to /login; the old cookie no longer works anywhere', async ({ service }) => {
  const account = await registerAndVerify(service, 'page.logout@example.com');
  const visitor = await signedInVisitor(service, account.email, account.password);
  const token = visitor.cookies.get('svc_token')!;
  await visitor.get('/account');
  const out = await visitor.post('/logout', {});
  assert.is(out.status, 303);
  assert.is(out.location, '/login');
  assert.ok(out.headers.getSetCookie().some((line) => /^svc_token=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0$/.test(line)));
  assert.not.ok(visitor.cookies.has('svc_token'));
  assert.is((await me(service, { cookie: `svc_token=${token}` })).status, 401);
  assert.is((await me(service, bearer(token))).status, 401);
  const [{ revoked }] = await service.deps.db.query<{ revoked: number }>('SELECT count(*)::int AS revoked FROM sessions WHERE account_id = $1 AND revoked_at IS NOT NULL', [account.user.id]);
  assert.is(revoked, 1);
  // Signed out already (another tab): still 303 to /login, nothing to revoke.
  await visitor.get('/login');
  assert.is((await visitor.post('/logout', {})).location, '/login');
});

test('GET / is a page, not an API error: 303 to /account with a valid cookie, else to /login', async ({ service }) => {
  const stranger = await createVisitor(service).get('/', { accept: 'text/html' });
  assert.is(stranger.status, 303);
  assert.is(stranger.location, '/login');
  assert.is(stranger.headers.get('content-security-policy'), PAGE_CSP);
  assert.is(stranger.headers.get('cache-control'), 'no-store');
  assert.not.match(stranger.headers.get('content-type') ?? '', 'json');
  const account = await registerAndVerify(service, 'page.root@example.com');
  const visitor = await signedInVisitor(service, account.email, account.password);
  const home = await visitor.get('/');
  assert.is(home.status, 303);
  assert.is(home.location, '/account');
  // A cookie that no longer signs in (revoked, or garbage) is a visitor like any other.
  await visitor.post('/logout', {});
  const stale = createVisitor(service);
  stale.cookies.set('svc_token', account.token.slice(0, -2) + 'xx');
  assert.is((await stale.get('/')).location, '/login');
  assert.is((await request(service.url, 'GET', '/?next=//evil.example')).headers.get('location'), '/login');
});

test('forgot password: the same page for a known and an unknown address; the known one gets a link that resets through the page', async ({ service, secrets }) => {
  const account = await registerAndVerify(service, 'page.forgot@example.com');
  const seen = service.smtp.mailsTo(account.email).length;
  const visitor = createVisitor(service);
  await visitor.get('/forgot-password');
  const known = await visitor.post('/forgot-password', { email: account.email });
  const unknown = await visitor.post('/forgot-password', { email: 'page.nobody@example.com' });
  assert.is(known.status, 200);
  assert.is(unknown.status, 200);
  const message = (text: string) => /<div class="alert alert-success"[^>]*>.*?<\/div>/s.exec(text)?.[0];
  assert.ok(message(known.text));
  assert.is(message(known.text), message(unknown.text));

  const token = linkToken(await nextMail(service, account.email, seen, /reset-password/), '/reset-password');
  secrets.add(token);
  const form = await visitor.get(`/reset-password?token=${token}`);
  assert.match(form.text, /<label for="password">New password<\/label>/);
  const done = await visitor.post('/reset-password', { token, password: 'a brand new password' });
  assert.is(done.status, 200);
  assert.match(done.text, /password is changed/i);
  assert.is((await signedInVisitor(service, account.email, 'a brand new password')).cookies.has('svc_token'), true);

  const bad = await visitor.post('/forgot-password', { email: 'nope' });
  assert.is(bad.status, 400);
  assert.is(inputValue(bad.text, 'email'), 'nope');
});

test('the log holds none of the passwords, tokens, cookies or keys of this suite', async ({ service, secrets }) => {
  // Its own registration and sign-in on the pages, besides whatever the other tests did.
  const visitor = createVisitor(service);
  await visitor.get('/register');
  assert.is((await visitor.post('/register', { name: 'Audit', email: 'page.audit@example.com', password: PASSWORD })).status, 200);
  secrets.add(linkToken(await nextMail(service, 'page.audit@example.com', 0)));
  const account = await registerAndVerify(service, 'page.audit.login@example.com');
  const signedIn = await signedInVisitor(service, account.email, account.password);
  secrets.add(signedIn.cookies.get('svc_token')!).add(signedIn.cookies.get('svc_device')!).add(account.apiKey).add(account.token);
  const text = service.logs.text();
  assert.ok(secrets.size >= 8, `${secrets.size} secrets`);
  for (const secret of secrets) assert.not.ok(text.includes(secret), `the log contains ${secret.slice(0, 8)}…`);
  assert.ok(service.logs.lines.some((line) => line.includes('"path":"/register"')), 'the page requests are in the log, by path');
});

test.run();

const limited = suite<{ service: TestService }>('pages with RATE_LIMITS=on: a refusal says how long to wait');

limited.before(async (context) => {
  context.service = await startTestApp({ RATE_LIMITS: 'on' });
});
limited.after(async ({ service }) => {
  await service?.close();
});

limited('too many logins: 429, Retry-After, and the wait in words; the e-mail is kept', async ({ service }) => {
  const account = await registerAndVerify(service, 'page.limited@example.com');
  const visitor = createVisitor(service);
  await visitor.get('/login');
  let answer = await visitor.post('/login', { email: account.email, password: 'wrong password' });
  for (let attempt = 1; answer.status === 401 && attempt < 20; attempt++) answer = await visitor.post('/login', { email: account.email, password: 'wrong password' });
  assert.is(answer.status, 429, answer.text);
  assertPageHeaders(answer);
  const wait = Number(answer.headers.get('retry-after'));
  assert.ok(wait > 60 && wait <= 15 * 60, `Retry-After ${wait}`);
  assert.match(answer.text, 'Too many attempts');
  assert.match(answer.text, new RegExp(`Please wait about ${Math.ceil(wait / 60)} minutes and try again\\.`));
  assert.is(inputValue(answer.text, 'email'), account.email);
});

limited.run();
