import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CODES_EXTENSION } from '../gateway/src/routes/openapi-document.ts';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { AUTH, PASSWORD, assertError, bearer, registerAndVerify, type Account } from './helpers/auth.ts';
import { request, startTestApp, type HttpResult, type TestService } from './helpers/service.ts';

// The answers issue 42 found missing from the docs, provoked over real HTTP and each held to
// the OpenAPI document the service publishes: the code must be one its route's answer of
// that status lists, with when. (Every other suite's answers are held to the declarations by
// the harness itself: helpers/declared-errors.ts.)

type Context = { service: TestService; document: any; account: Account };
const test = suite<Context>('declared errors: what the routes answer is what their OpenAPI answers list');

const post = (service: TestService, path: string, headers: Record<string, string>, json: unknown): Promise<HttpResult> =>
  request(service.url, 'POST', `${AUTH}/${path}`, { headers, json });

test.before(async (context) => {
  context.service = await startTestApp();
  const published = await request(context.service.url, 'GET', '/api/v1/openapi.json');
  assert.is(published.status, 200);
  context.document = published.body;
  context.account = await registerAndVerify(context.service, 'declared@example.com');
});
test.after(async ({ service }) => {
  await service?.close();
});

/** The answer is an error its route's OpenAPI answer of that status lists, code and when. */
function assertDocumented(document: any, method: string, path: string, answer: HttpResult): void {
  const documented = document.paths[path]?.[method.toLowerCase()]?.responses?.[String(answer.status)];
  assert.ok(documented, `${method} ${path} documents no ${answer.status} answer`);
  assert.ok(documented.content['application/json'].schema.allOf[1].properties.code.enum.includes(answer.body.code), `${method} ${path} ${answer.status}: ${answer.body.code} in the enum`);
  assert.type(documented[CODES_EXTENSION]?.[answer.body.code], 'string', `${method} ${path} ${answer.status}: says when ${answer.body.code}`);
  assert.ok(documented.description.includes(`\`${answer.body.code}\``), `${method} ${path} ${answer.status}: its description names ${answer.body.code}`);
}

test('POST /logout with an unknown field is 400 VALIDATION_FAILED naming it, and with broken JSON 400 INVALID_JSON: both documented', async ({ service, document }) => {
  const session = await registerAndVerify(service, 'logout@example.com');
  const stray = await post(service, 'logout', bearer(session.token), { stray: true });
  assertError(stray, 400, 'VALIDATION_FAILED');
  assert.equal(stray.body.issues.map((issue: { path: string }) => issue.path), ['stray']);
  assertDocumented(document, 'POST', '/auth/logout', stray);

  const broken = await request(service.url, 'POST', `${AUTH}/logout`, { headers: { ...bearer(session.token), 'content-type': 'application/json' }, body: '{"keep": ' });
  assertError(broken, 400, 'INVALID_JSON');
  assertDocumented(document, 'POST', '/auth/logout', broken);

  // Neither ended the session.
  assert.is((await request(service.url, 'GET', `${AUTH}/me`, { headers: bearer(session.token) })).status, 200);
});

test('with a second factor on, password/change and api-key/rotate are 403 STEP_UP_REQUIRED without a proof, by session and by API key: documented', async ({ service, document, account }) => {
  const setup = await post(service, 'mfa/totp/setup', bearer(account.token), { password: PASSWORD });
  assert.is(setup.status, 200, setup.text);
  const enabled = await post(service, 'mfa/totp/enable', bearer(account.token), { code: totpCodeAt(setup.body.secret, service.clock.now()) });
  assert.is(enabled.status, 200, enabled.text);

  const changes: Array<[string, unknown]> = [
    ['password/change', { current_password: PASSWORD, new_password: 'a new and longer passphrase' }],
    ['api-key/rotate', {}],
  ];
  for (const [path, body] of changes) {
    for (const [by, credential] of [['session', account.token], ['API key', account.apiKey]]) {
      const refused = await post(service, path, bearer(credential), body);
      assertError(refused, 403, 'STEP_UP_REQUIRED');
      assert.equal(refused.body.methods, ['totp', 'recovery_code'], `${path} by ${by}`);
      assertDocumented(document, 'POST', `/auth/${path}`, refused);
    }
  }
  // Nothing changed: the password and the key are the ones the account had.
  const me = await request(service.url, 'GET', `${AUTH}/me`, { headers: bearer(account.apiKey) });
  assert.is(me.body.user.api_key, account.apiKey);
});

test.run();
