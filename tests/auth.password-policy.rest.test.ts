import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, bearer, registerAndVerify, tokenUsed } from './helpers/auth.ts';
import { resetToken } from './helpers/accounts.ts';
import { createVisitor, signedInVisitor } from './helpers/pages.ts';
import { COMMON, DEEP, GOOD, PERSONAL, startRangeApi, triedPasswords } from './helpers/password-policy.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { trpcOver } from './helpers/trpc-http.ts';

// docs/SECURITY.md, Passwords, over the wire: the policy's refusal in tRPC's error data and under
// the pages' fields, and a 4xx for bodies no client sends to every route it sits on. Its rules
// (common, personal and breached passwords on register, reset and change) are called in process
// in tests/auth.password-policy.caller.test.ts.

const passwords = triedPasswords();
const rangeApi = await startRangeApi();

const test = suite<{ service: TestService }>('password policy over REST, tRPC and the pages');

test.before(async (context) => {
  context.service = await startTestApp({ HIBP_API_URL: rangeApi.url });
});
test.after(async ({ service }) => {
  await service?.close();
  await rangeApi.close();
});

test('change (tRPC): auth.changePassword refuses the same way, with the issue in the error data', async ({ service }) => {
  const account = await registerAndVerify(service, 'change.trpc@example.com', { name: 'Barnaby Quill' });
  const trpc = trpcOver(service);
  for (const [password, message] of [['qwertyuiop', COMMON], [DEEP.toUpperCase(), COMMON], ['barnaby quill pens only', PERSONAL]]) {
    passwords.add(password);
    const result = await trpc.mutation(account, 'auth.changePassword', { current_password: PASSWORD, new_password: password });
    assert.is(result.status, 400, result.text);
    assert.is(result.body.error.data.appCode, 'VALIDATION_FAILED');
    assert.equal(result.body.error.data.issues, [{ path: 'new_password', message }]);
  }
  const done = await trpc.mutation(account, 'auth.changePassword', { current_password: PASSWORD, new_password: GOOD });
  assert.is(done.status, 200, done.text);
});

test('pages: the refusal shows under the password field of /register and the New password field of /account', async ({ service }) => {
  const visitor = createVisitor(service);
  await visitor.get('/register');
  const refused = await visitor.post('/register', { name: 'Page Person', email: 'page.policy@example.com', password: 'password1', company: '' });
  assert.is(refused.status, 400, refused.text);
  assert.match(refused.text, /id="[\w-]*password-error">Password is one of the most common passwords: choose another\.</);

  const account = await registerAndVerify(service, 'page.change@example.com');
  const signedIn = await signedInVisitor(service, account.email, account.password);
  await signedIn.get('/account');
  const answer = await signedIn.post('/account/password', { current_password: PASSWORD, new_password: 'qwertyuiop' });
  assert.is(answer.status, 400, answer.text);
  assert.match(answer.text, /id="password-new_password-error">New password is one of the most common passwords: choose another\.</);
});

test('garbage to every route the policy sits on is still a 4xx', async ({ service }) => {
  const account = await registerAndVerify(service, 'garbage.policy@example.com');
  const token = await resetToken(service, account.email);
  const routes: Array<[string, Record<string, string>, (password: unknown) => unknown]> = [
    ['/register', {}, (password) => ({ email: 'garbage.new@example.com', name: 'G', password })],
    ['/password/reset', {}, (password) => ({ token, password })],
    ['/password/change', bearer(account.token), (password) => ({ current_password: PASSWORD, new_password: password })],
  ];
  for (const [path, headers, body] of routes) {
    const answers = [
      await request(service.url, 'POST', AUTH + path, { headers: { ...headers, 'content-type': 'text/plain' }, body: 'password1' }),
      await request(service.url, 'POST', AUTH + path, { headers: { ...headers, 'content-type': 'application/json' }, body: '{"password":' }),
      await request(service.url, 'POST', AUTH + path, { headers, json: ['password1'] }),
      ...(await Promise.all([12345678, null, { nested: 'password1' }, 'password\u0000one', 'x'.repeat(129)].map((value) => request(service.url, 'POST', AUTH + path, { headers, json: body(value) })))),
    ];
    for (const answer of answers) assert.ok(answer.status >= 400 && answer.status < 500, `${path}: ${answer.status} ${answer.text}`);
  }
  assert.is(await tokenUsed(service, token), false);
});

test('with the breach check off, the range API is never asked; the log holds no tried password', async ({ service }) => {
  assert.equal(rangeApi.seen, []);
  passwords.assertNotLogged(service);
});

test.run();
