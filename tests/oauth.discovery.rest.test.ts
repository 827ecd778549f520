import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBrowser, OAUTH, OIDC_SECRET, signInWith, startOidcProvider, type OidcProvider } from './helpers/identity-providers.ts';
import { freePort, request, startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// An OpenID Provider that cannot be reached when the service starts (docs/CONFIGURATION.md,
// Identity providers): the start goes on, the failure is logged, and discovery is tried
// again when someone first uses the provider.

const test = suite<{ service: TestService; op?: OidcProvider; opPort: number }>('identity provider discovery: logged at start, retried at first use');

test.before(async (context) => {
  context.opPort = await freePort();
  context.service = await startTestApp({
    OAUTH_PROVIDERS: 'late',
    OAUTH_LATE_CLIENT_ID: 'gatehouse',
    OAUTH_LATE_CLIENT_SECRET: OIDC_SECRET,
    OAUTH_LATE_ISSUER: `http://127.0.0.1:${context.opPort}`,
  });
});
test.after(async ({ service, op }) => {
  await service?.close();
  await op?.close();
});

test('an unreachable provider does not stop the start; its sign-in works once it answers', async (context) => {
  const { service } = context;
  assert.is((await request(service.url, 'GET', '/readyz')).status, 200, 'the service started');
  await eventually('the failed discovery in the log', () => service.logs.text().includes('identity provider discovery failed'));
  const line = service.logs.lines.find((entry) => entry.includes('identity provider discovery failed'))!;
  assert.match(line, '"provider":"late"');
  assert.not.match(line, OIDC_SECRET);

  const unavailable = await createBrowser().get(`${service.url}${OAUTH}/late/start`);
  assert.is(unavailable.status, 503);
  assert.match(unavailable.headers.get('content-type') ?? '', 'text/html');
  // It names what is away: the provider, not the database.
  assert.match(unavailable.text, 'Late cannot be reached just now');
  assert.not.match(unavailable.text, 'database');

  context.op = await startOidcProvider([`${service.url}${OAUTH}/late/callback`], OIDC_SECRET, context.opPort);
  context.op.people.set('sub-late', { email: 'late@example.com', email_verified: true });
  const browser = createBrowser();
  const answer = await signInWith(service, browser, 'late', 'sub-late');
  assert.is(answer.location, `${service.url}/account`, answer.text);
  assert.ok(browser.cookie(service.url, 'svc_token'));
});

test.run();
