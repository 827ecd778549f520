import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PASSWORD, nextMail, registerAndVerify } from './helpers/auth.ts';
import { createBrowser, OAUTH, signInFrom, signInWith, startServiceWithProviders, type WithProviders } from './helpers/identity-providers.ts';
import { createVisitor, signedInVisitor } from './helpers/pages.ts';

// The pages of sign-in with an identity provider (docs/API.md, Identity providers; Pages):
// "Continue with …" on /login and /register, and "Connected accounts" on /account.

const test = suite<{ env: WithProviders }>('pages: identity providers on /login, /register and /account');

test.before(async (context) => {
  context.env = await startServiceWithProviders();
});
test.after(async ({ env }) => {
  await env?.close();
});

const links = (html: string) => [...html.matchAll(/<a class="button button-secondary button-block" href="([^"]+)">Continue with ([^<]+)<\/a>/g)].map((match) => [match[1].replace(/&amp;/g, '&'), match[2]]);

test('/login and /register offer "Continue with {label}" as plain links; /login keeps next', async ({ env: { service } }) => {
  const visitor = createVisitor(service);
  const expected = [
    [`${service.url}${OAUTH}/acme/start`, 'Acme SSO'],
    [`${service.url}${OAUTH}/corp/start`, 'Corp'],
    [`${service.url}${OAUTH}/github/start`, 'Github'],
  ];
  assert.equal(links((await visitor.get('/login')).text), expected);
  assert.equal(links((await visitor.get('/register')).text), expected);
  assert.equal(links((await visitor.get('/login?next=/account%3Ftab%3D1')).text)[0], [`${service.url}${OAUTH}/acme/start?next=%2Faccount%3Ftab%3D1`, 'Acme SSO']);
});

test('/account of an account made through a provider: its connection, the others to connect, and "Set a password"', async ({ env: { service, op } }) => {
  op.people.set('sub-page', { email: 'page.person@example.com', email_verified: true, name: 'Page Person' });
  const browser = createBrowser();
  await signInWith(service, browser, 'acme', 'sub-page');
  const visitor = createVisitor(service);
  visitor.cookies.set('svc_token', browser.cookie(service.url, 'svc_token')!);
  const page = await visitor.get('/account');
  assert.is(page.status, 200);
  assert.match(page.text, 'Connected accounts');
  assert.match(page.text, 'Disconnect Acme SSO');
  // Connecting is a form (a POST with the CSRF token), never a link a page elsewhere could send a browser to.
  assert.match(page.text, 'action="/account/identities/corp/connect"');
  assert.match(page.text, 'Connect Corp');
  assert.not.match(page.text, 'intent=link');
  assert.match(page.text, 'Set a password');
  const seen = service.smtp.mailsTo('page.person@example.com').length;
  const asked = await visitor.post('/account/password/set', {});
  assert.is(asked.status, 303);
  assert.is(asked.location, '/account?done=password-link');
  assert.match((await nextMail(service, 'page.person@example.com', seen)).text, '/reset-password?token=');
  // The last way in cannot be disconnected: the card says why.
  const refused = await visitor.post('/account/identities/unlink', { name: 'acme' });
  assert.is(refused.status, 409);
  assert.match(refused.text, 'This is the only way to sign in to your account');
});

test('/account without a password asks for none: a fresh provider sign-in stands in, an old one is refused', async ({ env: { service, op } }) => {
  op.people.set('sub-page-fresh', { email: 'page.fresh@example.com', email_verified: true });
  const browser = createBrowser();
  await signInWith(service, browser, 'acme', 'sub-page-fresh');
  const visitor = createVisitor(service);
  visitor.cookies.set('svc_token', browser.cookie(service.url, 'svc_token')!);
  const page = await visitor.get('/account');
  assert.not.match(page.text, 'name="current_password"');
  assert.not.match(page.text, 'name="password"');
  assert.match(page.text, 'name="new_password"');
  const changed = await visitor.post('/account/email', { new_email: 'page.fresh.new@example.com' });
  assert.is(changed.status, 303, changed.text.slice(0, 300));
  assert.is(changed.location, '/account?done=email');
  service.clock.advance(10 * 60_000 + 1000);
  await visitor.get('/account');
  const late = await visitor.post('/account/password', { new_password: 'a passphrase of my own' });
  assert.is(late.status, 403);
  assert.match(late.text, 'Sign in again with your identity provider first');
});

test('/account of an account with a password: connect and disconnect need it', async ({ env: { service, op } }) => {
  const account = await registerAndVerify(service, 'page.linked@example.com');
  op.people.set('sub-page-linked', { email: 'idp@example.com', email_verified: true });
  const visitor = await signedInVisitor(service, account.email, PASSWORD);
  const before = await visitor.get('/account');
  assert.match(before.text, 'action="/account/identities/acme/connect"');
  const noPassword = await visitor.post('/account/identities/acme/connect', {});
  assert.is(noPassword.status, 400);
  assert.match(noPassword.text, 'Password');
  const wrongPassword = await visitor.post('/account/identities/acme/connect', { password: 'not it at all' });
  assert.is(wrongPassword.status, 401);
  assert.match(wrongPassword.text, 'The password is wrong. Nothing was changed.');
  const connect = await visitor.post('/account/identities/acme/connect', { password: PASSWORD });
  assert.is(connect.status, 303, connect.text.slice(0, 300));
  assert.match(connect.location!, `${service.url}${OAUTH}/acme/start?intent=link&ticket=`);
  // The browser holding the form's session goes on to the provider and back: connected.
  const browser = createBrowser();
  browser.setCookie(service.url, 'svc_token', visitor.cookies.get('svc_token')!);
  assert.is((await signInFrom(service, browser, 'acme', 'sub-page-linked', connect.location!)).location, `${service.url}/account`);
  const page = await visitor.get('/account');
  assert.match(page.text, 'Disconnect Acme SSO');
  assert.not.match(page.text, 'Set a password');
  const wrong = await visitor.post('/account/identities/unlink', { name: 'acme', password: 'not it at all' });
  assert.is(wrong.status, 401);
  assert.match(wrong.text, 'The password is wrong. Nothing was changed.');
  const done = await visitor.post('/account/identities/unlink', { name: 'acme', password: PASSWORD });
  assert.is(done.status, 303);
  assert.is(done.location, '/account?done=identity-unlinked');
  assert.not.match((await visitor.get('/account?done=identity-unlinked')).text, 'Disconnect Acme SSO');
});

test.run();
