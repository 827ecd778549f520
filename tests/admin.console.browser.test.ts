import { mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { AUTH, PASSWORD, bearer, login, registerAdmin, registerAndVerify, type Account } from './helpers/auth.ts';
import { launchBrowser, type TestBrowser } from './helpers/browser.ts';
import { EventReceiver } from './helpers/event-receiver.ts';
import { request, startTestService, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// docs/API.md, Pages (the operator's console) in Chromium, as an admin walks it: sign in with
// the second factor, find an account and reset its second factor with a step-up code, replay
// a dead inbound delivery, add an event endpoint and read its secret once, send a test and
// see a local receiver get it. Each page is photographed (SHOTS) to be looked at.

type Context = { service: TestService; browser: TestBrowser; receiver: EventReceiver };
const test = suite<Context>('pages in Chromium: the operator console');

/** Outside the repository: looked at by whoever changes the pages (docs/console-overview.png is 01-overview.png, copied by hand). */
const SHOTS = '/tmp/console-shots';
const STEP_MS = 30_000;
const STEP_UP_MS = 5 * 60_000;

test.before(async (context) => {
  mkdirSync(SHOTS, { recursive: true });
  context.service = await startTestService();
  context.receiver = await EventReceiver.start();
  context.browser = await launchBrowser();
});
test.after(async ({ browser, receiver, service }) => {
  await browser?.close();
  await receiver?.close();
  await service?.close();
});

const shoot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const heading = async (page: Page) => (await page.textContent('h1'))?.trim();

/** An account with the authenticator app on, through the REST routes; its secret. */
async function withApp(service: TestService, account: Account): Promise<string> {
  const setup = await request(service.url, 'POST', `${AUTH}/mfa/totp/setup`, { json: { password: PASSWORD }, headers: bearer(account.token) });
  const secret = setup.body.secret as string;
  const enabled = await request(service.url, 'POST', `${AUTH}/mfa/totp/enable`, { json: { code: totpCodeAt(secret, service.clock.now()) }, headers: bearer(account.token) });
  assert.is(enabled.status, 200, enabled.text);
  service.clock.advance(STEP_MS);
  return secret;
}

async function insertDeadDelivery(service: TestService): Promise<string> {
  const id = randomUUID();
  await service.deps.db.query(
    `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at, state, enqueued_at, processed_at, attempts, last_error)
     VALUES ($1, 'operator', '', $2, $3, $4, 'dead', $4, $4, 5, 'handler failed: connection reset')`,
    [id, `evt_${id.slice(0, 8)}`, Buffer.from(JSON.stringify({ event_type: 'console.demo', data: { note: 'a dead delivery <b>kept</b> as text' } }, null, 2)), service.clock.now()],
  );
  return id;
}

test('an admin walks the console: an account, its second factor reset with a step-up code, a dead delivery replayed, an endpoint added and tested', async ({ service, browser, receiver }) => {
  const admin = await registerAdmin(service, 'ops.lead@example.com');
  const adminSecret = await withApp(service, admin);
  const target = await registerAndVerify(service, 'lost.phone@example.com', { name: 'Grace Hopper' });
  await withApp(service, target);
  for (let index = 0; index < 4; index += 1) await registerAndVerify(service, `customer.${index}@example.com`);
  await login(service, target.email, 'a wrong password');
  const deadId = await insertDeadDelivery(service);
  const code = () => totpCodeAt(adminSecret, service.clock.now());

  const { page } = await browser.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4')) problems.push(`console: ${message.text()}`);
  });

  // Signed out, the console sends to the sign-in page and back to it after the second step.
  await page.goto(`${service.url}/admin`);
  await page.waitForURL(`${service.url}/login?next=/admin`);
  await page.getByLabel('E-mail address').fill(admin.email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(/\/login\/mfa/);
  await page.getByLabel('Code from your authenticator app').fill(code());
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${service.url}/admin`);
  assert.is(await heading(page), 'Overview');
  assert.ok(await page.locator('svg.chart').isVisible(), 'the sign-ins chart');
  assert.match((await page.textContent('#logins')) ?? '', 'Signed in');
  await shoot(page, '01-overview');

  // Find the account and reset its second factor: the session's step-up is long over.
  service.clock.advance(STEP_UP_MS + STEP_MS);
  await page.getByRole('link', { name: 'Accounts', exact: true }).click();
  await page.getByLabel('E-mail, its start, or an account id').fill('lost.');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(`${service.url}/admin/accounts?q=lost.`);
  assert.is(await page.locator('tbody tr').count(), 1);
  await shoot(page, '02-accounts-search');
  await page.getByRole('link', { name: target.email }).click();
  await page.waitForURL(`${service.url}/admin/accounts/${target.user.id}`);
  assert.match((await page.textContent('#account')) ?? '', 'Grace Hopper');
  await shoot(page, '03-account');
  assert.ok(await page.locator('#step-up').isVisible(), 'the page offers to give the code up front');
  await page.getByRole('link', { name: 'Reset the second factor' }).click();
  await page.waitForURL(`${service.url}/admin/accounts/${target.user.id}/reset-mfa`);
  assert.is(await heading(page), 'Reset the second factor?');
  await shoot(page, '04-reset-confirm');
  await page.getByLabel('Code from your authenticator app').fill('000000');
  await page.getByRole('button', { name: 'Reset the second factor' }).click();
  await page.waitForLoadState();
  assert.match((await page.textContent('#confirm-code-error')) ?? '', 'That code is wrong');
  await shoot(page, '04-step-up-wrong-code');
  assert.is(await heading(page), 'Reset the second factor?');
  await page.getByLabel('Code from your authenticator app').fill(code());
  await page.getByRole('button', { name: 'Reset the second factor' }).click();
  await page.waitForURL(`${service.url}/admin/accounts/${target.user.id}?done=mfa-reset`);
  assert.match((await page.textContent('[role="status"]')) ?? '', 'The second factor is reset');
  const status = await request(service.url, 'GET', `${AUTH}/mfa`, { headers: bearer((await login(service, target.email)).body.token) });
  assert.is(status.body.totp, false, 'the target has no second factor now');
  await shoot(page, '05-account-after-reset');

  // Replay a dead inbound delivery (stepped up a moment ago: no code asked).
  await page.getByRole('link', { name: 'Inbox', exact: true }).click();
  await page.getByLabel('State').selectOption('dead');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/\/admin\/inbox\?.*state=dead/);
  await shoot(page, '06-inbox-dead');
  await page.locator(`a[href="/admin/inbox/${deadId}"]`).click();
  await page.waitForURL(`${service.url}/admin/inbox/${deadId}`);
  assert.match((await page.textContent('pre.payload')) ?? '', 'a dead delivery <b>kept</b> as text');
  await shoot(page, '07-inbox-delivery');
  await page.getByRole('button', { name: 'Replay this delivery' }).click();
  await page.waitForURL(`${service.url}/admin/inbox/${deadId}?done=replayed`);
  await eventually(
    'the delivery is no longer dead',
    async () => {
      const [row] = await service.deps.db.query<{ state: string }>('SELECT state FROM webhook_inbox WHERE id = $1', [deadId]);
      return row.state !== 'dead' ? row : undefined;
    },
    15_000,
  );

  // Add an endpoint: its secret once; send a test and see the receiver get it, signed.
  await page.getByRole('link', { name: 'Events out', exact: true }).click();
  await page.waitForURL(`${service.url}/admin/events`);
  await shoot(page, '08-events-empty');
  await page.getByLabel('URL', { exact: true }).fill(receiver.url);
  await page.getByLabel('Description').fill('Billing service (staging)');
  await page.getByRole('button', { name: 'Add the endpoint' }).click();
  await page.waitForURL(`${service.url}/admin/events/endpoints`);
  assert.is(await heading(page), 'Endpoint added');
  const secret = ((await page.textContent('#endpoint-secret')) ?? '').trim();
  assert.match(secret, /^whsec_/);
  receiver.secrets = [secret];
  await shoot(page, '09-endpoint-secret');
  await page.getByRole('link', { name: 'I have stored it: go to the endpoint' }).click();
  await page.waitForURL(/\/admin\/events\/endpoints\/[0-9a-f-]{36}$/);
  assert.not.match(await page.content(), secret, 'the secret is not shown again');
  await page.getByRole('button', { name: 'Send a test' }).click();
  await page.waitForURL(/\/admin\/events\/deliveries\/[0-9a-f-]{36}$/);
  const pinged = await eventually('the receiver got the test, signed', () => (receiver.delivered().some((event) => event.type === 'ping') ? true : undefined), 15_000);
  assert.ok(pinged);
  await eventually(
    'the delivery page shows it delivered',
    async () => {
      await page.reload();
      return (await page.textContent('.details'))?.includes('delivered') ? true : undefined;
    },
    15_000,
  );
  assert.match((await page.textContent('table')) ?? '', '200');
  await shoot(page, '10-event-delivery');
  await page.getByRole('link', { name: 'Its endpoint' }).click();
  await page.waitForURL(/\/admin\/events\/endpoints\/[0-9a-f-]{36}$/);
  await shoot(page, '11-endpoint');
  await page.getByRole('link', { name: 'Remove this endpoint' }).click();
  await page.waitForURL(/\/remove$/);
  assert.is(await heading(page), 'Remove the endpoint?');
  await shoot(page, '12-endpoint-remove-confirm');
  await page.getByRole('link', { name: 'Back to the endpoint' }).click();

  await page.getByRole('link', { name: 'Events out', exact: true }).click();
  await shoot(page, '13-events');
  await page.getByRole('link', { name: 'Audit', exact: true }).click();
  await page.waitForURL(`${service.url}/admin/audit`);
  assert.match((await page.textContent('table')) ?? '', 'admin.mfa_reset');
  await shoot(page, '14-audit');
  await page.goto(`${service.url}/admin`);
  assert.match((await page.textContent('#actions')) ?? '', 'admin.mfa_reset');
  await shoot(page, '15-overview-after');
  assert.equal(problems, []);
});

test('a plain user sees the 403 page; garbage in the address is a 4xx page', async ({ service, browser }) => {
  const user = await registerAndVerify(service, 'not.an.admin@example.com');
  const { page } = await browser.newPage();
  await page.goto(`${service.url}/login?next=/admin`);
  await page.getByLabel('E-mail address').fill(user.email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${service.url}/admin`);
  assert.is(await heading(page), 'For administrators only');
  await shoot(page, '16-not-admin');
  const answer = await page.goto(`${service.url}/admin/inbox?since=tomorrow`);
  assert.is(answer?.status(), 403);
});

test.run();
