import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createGatehouseClient, TRPCClientError, type RouterInputs, type RouterOutputs } from '../client/src/index.ts';
import { PASSWORD, nextMail, registerAndVerify } from './helpers/auth.ts';
import { startTestApp, testFetch, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';

const test = suite<{ service: TestService }>('client: the typed tRPC client against a running service');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

const endpoint = (service: TestService) => `${service.url}/trpc`;

/** The rejection of `promise`, which must be a TRPCClientError. */
async function rejection(promise: Promise<unknown>): Promise<TRPCClientError<any>> {
  try {
    await promise;
  } catch (error) {
    assert.instance(error, TRPCClientError);
    return error as TRPCClientError<any>;
  }
  throw new Error('expected the call to fail');
}

test('register, verify from the real mail, login, me with the JWT and the API key, logout', async ({ service }) => {
  const email = 'client.flow@example.com';
  let session: string | undefined;
  const client = createGatehouseClient({ fetch: testFetch, url: endpoint(service), token: () => session });

  const input: RouterInputs['auth']['register'] = { email: 'Client.Flow@Example.com', password: PASSWORD, name: 'Client Flow', company: 'Acme' };
  const registered = await client.auth.register.mutate(input);
  assert.is(registered.success, true);
  assert.is(registered.requires_verification, true);

  const token = linkToken(await nextMail(service, email, 0));
  const verified = await client.auth.verifyEmail.mutate({ token });
  assert.is(verified.success, true);

  const loggedIn = await client.auth.login.mutate({ email, password: PASSWORD });
  assert.is(loggedIn.success, true);
  const user: RouterOutputs['auth']['me']['user'] = loggedIn.user;
  assert.is(user.email, email);
  assert.is(user.name, 'Client Flow');
  assert.is(user.company, 'Acme');
  assert.is(user.email_verified, true);

  // The token function is asked on every request: logging in needs no new client.
  assert.is((await rejection(client.auth.me.query())).data?.appCode, 'UNAUTHORIZED');
  session = loggedIn.token;
  const viaJwt = await client.auth.me.query();
  assert.equal(viaJwt.user, user);

  const withKey = createGatehouseClient({ fetch: testFetch, url: endpoint(service), apiKey: user.api_key });
  assert.equal((await withKey.auth.me.query()).user, user);

  assert.equal(await client.auth.logout.mutate(), { success: true });
  const afterLogout = await rejection(client.auth.me.query());
  assert.is(afterLogout.data?.appCode, 'UNAUTHORIZED');
  assert.is(afterLogout.data?.httpStatus, 401);
  // The API key outlives the session.
  assert.equal((await withKey.auth.me.query()).user, user);
});

test('a static token string authenticates, and wins over an API key', async ({ service }) => {
  const first = await registerAndVerify(service, 'client.static@example.com');
  const second = await registerAndVerify(service, 'client.other@example.com');
  const client = createGatehouseClient({ fetch: testFetch, url: endpoint(service), token: first.token, apiKey: second.apiKey });
  assert.is((await client.auth.me.query()).user.email, first.email);
  const fallback = createGatehouseClient({ fetch: testFetch, url: endpoint(service), token: async () => null, apiKey: second.apiKey });
  assert.is((await fallback.auth.me.query()).user.email, second.email);
});

test('the svc_token cookie authenticates tRPC calls as it does REST ones', async ({ service }) => {
  const account = await registerAndVerify(service, 'client.cookie@example.com');
  const client = createGatehouseClient({ fetch: testFetch, url: endpoint(service), headers: { cookie: `svc_token=${account.token}` } });
  assert.is((await client.auth.me.query()).user.id, account.user.id);
  await client.auth.logout.mutate();
  assert.is((await rejection(client.auth.me.query())).data?.appCode, 'UNAUTHORIZED');
});

test('validation errors carry appCode VALIDATION_FAILED and the issues', async ({ service }) => {
  const client = createGatehouseClient({ fetch: testFetch, url: endpoint(service) });
  const error = await rejection(client.auth.register.mutate({ email: 'not-an-address', password: 'short', name: '   ' }));
  assert.is(error.data?.appCode, 'VALIDATION_FAILED');
  assert.is(error.data?.httpStatus, 400);
  const paths = (error.data?.issues as Array<{ path: string; message: string }>).map((issue) => issue.path).sort();
  assert.equal(paths, ['email', 'name', 'password']);
});

test('wrong credentials and an unverified address carry their contract codes', async ({ service }) => {
  const client = createGatehouseClient({ fetch: testFetch, url: endpoint(service) });
  await client.auth.register.mutate({ email: 'client.unverified@example.com', password: PASSWORD, name: 'Unverified' });
  const wrong = await rejection(client.auth.login.mutate({ email: 'client.unverified@example.com', password: 'not the password' }));
  assert.is(wrong.data?.appCode, 'INVALID_CREDENTIALS');
  const unverified = await rejection(client.auth.login.mutate({ email: 'client.unverified@example.com', password: PASSWORD }));
  assert.is(unverified.data?.appCode, 'EMAIL_NOT_VERIFIED');
  assert.is(unverified.data?.httpStatus, 403);
  const badToken = await rejection(client.auth.verifyEmail.mutate({ token: 'no-such-token' }));
  assert.is(badToken.data?.appCode, 'INVALID_TOKEN');
});

test('a custom fetch and extra headers are used for every request', async ({ service }) => {
  const account = await registerAndVerify(service, 'client.headers@example.com');
  const seen: string[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    seen.push(String(input instanceof Request ? input.url : input));
    return testFetch(input, init);
  };
  const client = createGatehouseClient({
    url: endpoint(service),
    apiKey: account.apiKey,
    fetch: recordingFetch,
    headers: { 'x-request-id': 'client-suite-request-1' },
  });
  // Two queries in one tick go out as one batched request.
  const [one, two] = await Promise.all([client.auth.me.query(), client.auth.me.query()]);
  assert.is(one.user.id, account.user.id);
  assert.is(two.user.id, account.user.id);
  assert.is(seen.length, 1);
  assert.match(seen[0], `${endpoint(service)}/auth.me,auth.me`);
  const logged = service.logs.lines.map((line) => JSON.parse(line)).filter((line) => line.requestId === 'client-suite-request-1');
  assert.ok(logged.length > 0, 'the extra header reached the service');
});

test('in one batch, a login keeps its cookie and a logout clears it whatever the call beside them did', async ({ service }) => {
  const account = await registerAndVerify(service, 'client.batch-cookies@example.com');
  const answers: Response[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const answer = await testFetch(input, init);
    answers.push(answer);
    return answer;
  };
  const client = createGatehouseClient({ url: endpoint(service), fetch: recordingFetch });
  // Two mutations in one tick go out as one batched request.
  const [login, failed] = await Promise.allSettled([
    client.auth.login.mutate({ email: account.email, password: PASSWORD }),
    client.auth.verifyEmail.mutate({ token: 'not-a-token' }),
  ]);
  assert.is(answers.length, 1, 'one request');
  assert.is(login.status, 'fulfilled');
  assert.is(failed.status, 'rejected');
  const cookie = answers[0].headers.getSetCookie().find((line) => line.startsWith('svc_token='));
  assert.ok(cookie, `the login's cookie is set: ${answers[0].headers.getSetCookie().join(' | ')}`);
  const token = /^svc_token=([^;]+)/.exec(cookie!)![1];
  assert.is(token, (login as PromiseFulfilledResult<{ token: string }>).value.token);

  const signedIn = createGatehouseClient({ url: endpoint(service), fetch: recordingFetch, headers: { cookie: `svc_token=${token}` } });
  answers.length = 0;
  const [logout, alsoFailed] = await Promise.allSettled([signedIn.auth.logout.mutate(), signedIn.auth.verifyEmail.mutate({ token: 'not-a-token' })]);
  assert.equal([logout.status, alsoFailed.status, answers.length], ['fulfilled', 'rejected', 1]);
  const cleared = answers[0].headers.getSetCookie().find((line) => line.startsWith('svc_token='));
  assert.match(cleared ?? '', /^svc_token=;.*Max-Age=0/, 'the logout clears the cookie');
  assert.is((await rejection(signedIn.auth.me.query())).data?.appCode, 'UNAUTHORIZED');

  // Every call failed: the answer is the error's, with no cookie.
  answers.length = 0;
  await Promise.allSettled([client.auth.login.mutate({ email: account.email, password: 'wrong password here' }), client.auth.verifyEmail.mutate({ token: 'not-a-token' })]);
  assert.equal(answers[0].headers.getSetCookie().filter((line) => line.startsWith('svc_token=')), []);
});

test('an unknown procedure is a 404 NOT_FOUND', async ({ service }) => {
  const client = createGatehouseClient({ fetch: testFetch, url: `${service.url}/trpc` }) as any;
  const error = await rejection(client.auth.nonexistent.query());
  assert.is(error.data?.httpStatus, 404);
  assert.is(error.data?.appCode, 'NOT_FOUND');
});

test.run();
