import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { adminService } from '../server/src/index.ts';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { AUTH, PASSWORD, bearer, login, nextMail, registerAdmin, registerAndVerify, registerForToken, type Account } from './helpers/auth.ts';
import { EventReceiver } from './helpers/event-receiver.ts';
import { createBrowser, signInWith, startServiceWithProviders, type WithProviders } from './helpers/identity-providers.ts';
import { request, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';
import { eventually } from './helpers/wait.ts';
import { callerFor, paddleEvent, paddleHeaders, post, stripeEvent, stripeHeaders, unixNow, viberHeaders, viberMessage, viberToken } from './helpers/webhook-fixtures.ts';

// Every event type and every `what` of security.changed (docs/EVENTS.md, Event types), each
// made the way a person, a provider or an operator makes it, over HTTP where there is a
// route, and each seen by a real receiver that verifies it with the `standardwebhooks`
// package: one account's whole life, in the order it happened.

const ADMIN = '/api/v1/admin';
const BILLING_SECRET = 'pdl_ntfset_types_tests_secret_0123';
const PAYMENT_SECRET = `whsec_${randomBytes(24).toString('base64url')}`;
const BOT_TOKEN = `4453b6ac1${randomBytes(6).toString('hex')}-e02c5f12174805f9-daec9cbb5448c51f`;

type Context = { env: WithProviders; admin: Account; receiver: EventReceiver; endpoint: string };
const test = suite<Context>('events out: every type and every security change, delivered and verified');

test.before(async (context) => {
  context.env = await startServiceWithProviders({ BILLING_WEBHOOK_SECRET: BILLING_SECRET, BILLING_PLANS: 'pri_pro=pro' });
  const { service } = context.env;
  context.admin = await registerAdmin(service, 'types-admin@example.com');
  context.receiver = await EventReceiver.start();
  const created = await request(service.url, 'POST', `${ADMIN}/event-endpoints`, { json: { url: context.receiver.url }, headers: bearer(context.admin.token) });
  assert.is(created.status, 201, created.text);
  context.receiver.secrets = [created.body.secret];
  context.endpoint = created.body.endpoint.id;
});
test.after(async ({ env, receiver }) => {
  await env?.close();
  await receiver?.close();
});

/** What an event says, in short: its type and, for the account's changes, which. */
const summary = (event: { type: string; data: any }) =>
  event.type === 'security.changed' ? `security.changed ${event.data.what}` : event.type === 'account.updated' ? `account.updated ${event.data.changed.join(',')}` : event.type;

const accountOf = (event: { data: any }) => event.data.account_id ?? event.data.account?.id;

/** Waits until `accountId`'s events at the receiver are `count`, and returns them in the order they arrived. */
const eventsOf = (receiver: EventReceiver, accountId: number, count: number) =>
  eventually(`${count} events of account ${accountId}`, () => {
    const seen = receiver.delivered().filter((event) => accountOf(event) === accountId);
    return seen.length >= count ? seen : undefined;
  });

/** The step's events arrived after the ones before: returns what the account's events say so far. */
async function expectNext(receiver: EventReceiver, accountId: number, expected: string[], step: string[]): Promise<string[]> {
  const all = [...expected, ...step];
  const seen = await eventsOf(receiver, accountId, all.length);
  assert.equal(seen.map(summary), all);
  return all;
}

const post200 = async (service: TestService, path: string, token: string | undefined, json: unknown) => {
  const answer = await request(service.url, 'POST', path, { json, headers: token ? bearer(token) : {} });
  assert.is(answer.status, 200, `${path}: ${answer.text}`);
  return answer;
};

/** The reset link mailed to `email` for a forgotten password, used to set `password`. */
async function resetBy(service: TestService, email: string, password: string) {
  const seen = service.smtp.mailsTo(email).length;
  await post200(service, `${AUTH}/password/forgot`, undefined, { email });
  const mail = await nextMail(service, email, seen, /reset-password/);
  await post200(service, `${AUTH}/password/reset`, undefined, { token: linkToken(mail, '/reset-password'), password });
}

test('one account from creation to deletion: every event type and every what, each verified, in the order it happened', async ({ env, admin, receiver }) => {
  const { service, op } = env;
  let expected: string[] = [];
  const person = await registerAndVerify(service, `life-${randomBytes(3).toString('hex')}@example.com`);
  const id = person.user.id as number;
  let token = person.token;
  expected = await expectNext(receiver, id, expected, ['account.created']);

  // account.updated, for each field that can change.
  await post200(service, `${AUTH}/profile`, token, { name: 'Ada Lovelace', company: 'Analytical Engines' });
  expected = await expectNext(receiver, id, expected, ['account.updated name,company']);
  const email = `moved-${randomBytes(3).toString('hex')}@example.com`;
  await post200(service, `${AUTH}/email/change`, token, { new_email: email, password: PASSWORD });
  await post200(service, `${AUTH}/email/confirm`, undefined, { token: linkToken(await service.smtp.waitFor(email), '/confirm-email') });
  expected = await expectNext(receiver, id, expected, ['account.updated email']);
  const subscription = JSON.stringify(
    paddleEvent({
      eventType: 'subscription.activated',
      occurredAt: service.clock.now(),
      data: { id: `sub_${randomBytes(4).toString('hex')}`, status: 'active', items: [{ price: { id: 'pri_pro' } }], custom_data: { account_id: String(id) } },
    }),
  );
  assert.is((await post(service, '/billingprovider/webhook', subscription, paddleHeaders(subscription, BILLING_SECRET, unixNow(service)))).status, 200);
  expected = await expectNext(receiver, id, expected, ['account.updated plan']);
  await adminService.setRole(service.deps, { accountId: admin.user.id, request: { ip: '127.0.0.1', requestId: 'types' } }, { email }, 'admin');
  expected = await expectNext(receiver, id, expected, ['account.updated role']);

  // security.changed: the key, the password changed and reset.
  await post200(service, `${AUTH}/api-key/rotate`, token, {});
  expected = await expectNext(receiver, id, expected, ['security.changed api_key']);
  const changed = 'a brand new passphrase for ada';
  await post200(service, `${AUTH}/password/change`, token, { current_password: PASSWORD, new_password: changed });
  expected = await expectNext(receiver, id, expected, ['security.changed password']);
  const reset = 'the passphrase after the reset';
  await resetBy(service, email, reset);
  expected = await expectNext(receiver, id, expected, ['security.changed password']);
  token = (await login(service, email, reset)).body.token;

  // An identity provider joins the account at its first sign-in, and is disconnected.
  op.people.set('sub-life', { email, email_verified: true, name: 'Ada' });
  assert.is((await signInWith(service, createBrowser(), 'corp', 'sub-life')).location, `${service.url}/account`);
  expected = await expectNext(receiver, id, expected, ['security.changed identity']);
  await post200(service, `${AUTH}/identities/corp/unlink`, token, { password: reset });
  expected = await expectNext(receiver, id, expected, ['security.changed identity']);

  // Sessions signed out by the person, and a second factor turned on.
  await post200(service, `${AUTH}/sessions/revoke-all`, token, { keep_current: true });
  expected = await expectNext(receiver, id, expected, ['security.changed sessions_revoked']);
  const setup = await post200(service, `${AUTH}/mfa/totp/setup`, token, { password: reset });
  await post200(service, `${AUTH}/mfa/totp/enable`, token, { code: totpCodeAt(setup.body.secret, service.clock.now()) });
  expected = await expectNext(receiver, id, expected, ['security.changed mfa']);

  // An operator resets the second factor and signs the account out everywhere.
  await post200(service, `${ADMIN}/accounts/${id}/reset-mfa`, admin.token, {});
  await post200(service, `${ADMIN}/accounts/${id}/revoke-sessions`, admin.token, {});
  expected = await expectNext(receiver, id, expected, ['security.changed mfa', 'security.changed sessions_revoked']);
  token = (await login(service, email, reset)).body.token;

  // A payment of the account's site, and a visitor's message to its bot.
  const caller = callerFor(service, { id, email, token });
  const { siteKey } = await caller.sites.create({ name: 'Shop', paymentWebhookSecret: PAYMENT_SECRET });
  const reference = `pi_${randomBytes(6).toString('hex')}`;
  const paid = JSON.stringify(stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: { id: reference, object: 'payment_intent', amount: 990, amount_received: 990, currency: 'eur', status: 'succeeded' } }));
  assert.is((await post(service, `/webhook/payment/${siteKey}`, paid, stripeHeaders(paid, PAYMENT_SECRET, unixNow(service)))).status, 200);
  expected = await expectNext(receiver, id, expected, ['payment.updated']);
  const channel = await caller.channels.create({ platform: 'messengertwo', name: 'Shop bot', botToken: BOT_TOKEN });
  const message = viberMessage(viberToken(Number.parseInt(randomBytes(2).toString('hex'), 16)), { id: 'U-life=', name: 'Vera' }, 'Open on Sunday?');
  assert.is((await post(service, `/messengertwo/bot/${channel.channelId}`, message, viberHeaders(message, BOT_TOKEN))).status, 200);
  expected = await expectNext(receiver, id, expected, ['message.received']);

  await post200(service, `${AUTH}/account/delete`, token, { password: reset });
  expected = await expectNext(receiver, id, expected, ['account.deleted']);

  // What each event carries.
  const seen = await eventsOf(receiver, id, expected.length);
  assert.equal(seen.find((event) => event.type === 'payment.updated')!.data, { site_key: siteKey, account_id: id, reference, status: 'paid', amount: 990, currency: 'eur' });
  assert.equal(seen.find((event) => event.type === 'message.received')!.data, { channel_id: channel.channelId, account_id: id, conversation_id: 'U-life=', external_user_id: 'U-life=', text: 'Open on Sunday?' });
  for (const event of seen.filter((one) => one.type === 'security.changed')) assert.equal(Object.keys(event.data).sort(), ['account_id', 'what']);
  const updated = seen.filter((event) => event.type === 'account.updated').map((event) => event.data.account);
  assert.equal(updated.map((account) => [account.name, account.email, account.plan, account.role]).at(-1), ['Ada Lovelace', email, 'pro', 'admin']);
  assert.ok(seen.every((event) => !('api_key' in (event.data.account ?? {}))), 'no API key in an event');
  assert.equal(new Set(seen.map((event) => event.id)).size, seen.length, 'each event once');
  // Every request the receiver had verified under the endpoint's secret with standardwebhooks.
  assert.ok(receiver.received.every((seenRequest) => !seenRequest.error), receiver.received.map((seenRequest) => seenRequest.error).join());
});

test('a password reset of an account never verified: the link proved the address, so account.created comes first', async ({ env, receiver }) => {
  const { service } = env;
  const email = `unverified-${randomBytes(3).toString('hex')}@example.com`;
  await registerForToken(service, email);
  const [{ id }] = await service.deps.db.query<{ id: number }>('SELECT id FROM accounts WHERE email = $1', [email]);
  await resetBy(service, email, 'a passphrase chosen by reset');
  const seen = await eventsOf(receiver, id, 2);
  assert.equal(seen.map(summary), ['account.created', 'security.changed password']);
  assert.is(seen[0].data.account.email_verified, true);
  assert.is(seen[0].data.account.email, email);
  assert.is((await login(service, email, 'a passphrase chosen by reset')).status, 200);
  // Reset again: the account is known, so only the password change is news.
  await resetBy(service, email, 'and another passphrase now');
  assert.equal((await eventsOf(receiver, id, 3)).map(summary), ['account.created', 'security.changed password', 'security.changed password']);
});

test.run();
