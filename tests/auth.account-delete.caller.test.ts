import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, bearer, nextMail, registerAndVerify, type Account } from './helpers/auth.ts';
import { NOTHING_LEFT, SITE_SECRET, VIBER_TOKEN, accountWithSite, auditRows, count, owned } from './helpers/account-deletion.ts';
import { activityEvents, answerOf, callerWith, loginCall as login, meCall as me } from './helpers/caller.ts';
import { startBotApi, type BotApi } from './helpers/bot-api.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';
import { eventually } from './helpers/wait.ts';
import {
  callerFor,
  inboxRows,
  paddleEvent,
  paddleHeaders,
  post,
  settledDelivery,
  stripeEvent,
  stripeHeaders,
  telegramHeaders,
  telegramUpdate,
  unixNow,
  viberHeaders,
  viberMessage,
  viberToken,
} from './helpers/webhook-fixtures.ts';

// docs/API.md, Account lifecycle (Deleting an account): the rules of auth.deleteAccount, called in
// process. With the password, the account and everything it owns go in one transaction; billing
// keeps its subscriptions without the account; the address may register again; later deliveries
// naming the account (through their webhooks, over HTTP) are ignored. What HTTP adds (no
// credential, bodies no client sends) is tested over REST in tests/auth.account-delete.rest.test.ts.

const BILLING_SECRET = `pdl_ntfset_${randomBytes(16).toString('hex')}`;
const OPERATOR_TOKEN = `7000000011:${randomBytes(18).toString('base64url')}`;
const OPERATOR_SECRET = `op_${randomBytes(24).toString('base64url')}`;

type Context = { service: TestService; botApi: BotApi };
const test = suite<Context>('auth.deleteAccount: the account and all it owns go, once, with its password');

test.before(async (context) => {
  context.botApi = await startBotApi();
  context.service = await startTestApp({
    BILLING_WEBHOOK_SECRET: BILLING_SECRET,
    BILLING_PLANS: 'pri_01pro=pro,pri_01team=team',
    OPERATOR_BOT_TOKEN: OPERATOR_TOKEN,
    OPERATOR_BOT_SECRET: OPERATOR_SECRET,
    TELEGRAM_API_URL: context.botApi.url,
  });
});
test.after(async ({ service, botApi }) => {
  await service?.close();
  await botApi?.close();
});

/** auth.deleteAccount with the credential these headers carry; any input, as a client that ignores the types would send it. */
const deleteAccount = (service: TestService, headers: Record<string, string>, input: unknown) => answerOf(callerWith(service, headers).auth.deleteAccount(input as never));


function subscription(id: string, accountId: number, status = 'active') {
  return {
    id,
    status,
    customer_id: 'ctm_01h8441jn5pcwrfhwh78jqt8hk',
    currency_code: 'EUR',
    items: [{ status: 'active', quantity: 1, price: { id: 'pri_01pro', product_id: 'pro_01', unit_price: { amount: '1500', currency_code: 'EUR' } } }],
    custom_data: { account_id: String(accountId) },
  };
}

async function deliverBilling(service: TestService, eventType: string, data: Record<string, unknown>) {
  const event = paddleEvent({ eventType, occurredAt: service.clock.now(), data });
  const payload = JSON.stringify(event);
  const result = await post(service, '/billingprovider/webhook', payload, paddleHeaders(payload, BILLING_SECRET, unixNow(service)));
  return { event, result };
}

function deliverPayment(service: TestService, siteKey: string, paymentIntent: string) {
  const event = stripeEvent({
    type: 'payment_intent.succeeded',
    created: unixNow(service),
    object: { id: paymentIntent, object: 'payment_intent', amount: 2500, amount_received: 2500, currency: 'eur', status: 'succeeded' },
  });
  const payload = JSON.stringify(event);
  return { event, result: post(service, `/webhook/payment/${siteKey}`, payload, stripeHeaders(payload, SITE_SECRET, unixNow(service))) };
}

/** What the fully furnished account of the main scenario owns, saved before it is deleted. */
type Furnished = {
  account: Account;
  otherSession: string;
  siteKey: string;
  siteIds: number[];
  channelIds: string[];
  subscriptionId: string;
};

/**
 * The main scenario's account: two sessions, e-mail tokens, a site with a payment, a channel
 * with a message, a link code, a linked operator chat and a subscription. Checked as it is
 * furnished.
 */
async function furnishAccount({ service, botApi }: Context): Promise<Furnished> {
  const account = await registerAndVerify(service, 'delete.owner@example.com');
  const otherSession = (await login(service, account.email)).body.token;
  const owner = { id: account.user.id as number, email: account.email, token: account.token };
  const caller = callerFor(service, owner);

  // A live reset token beside the used verification token.
  assert.is((await request(service.url, 'POST', `${AUTH}/password/forgot`, { json: { email: account.email } })).status, 200);
  await eventually('the reset token issued', async () => (await count(service, `email_tokens WHERE account_id = $1 AND purpose = 'reset'`, [owner.id])) > 0);

  const { siteKey } = await caller.sites.create({ name: 'Doomed shop', paymentWebhookSecret: SITE_SECRET });
  const paid = deliverPayment(service, siteKey, `pi_${randomBytes(8).toString('hex')}`);
  assert.is((await paid.result).status, 200);
  assert.is((await settledDelivery(service, 'payment', paid.event.id)).state, 'processed');

  const channel = await caller.channels.create({ platform: 'messengertwo', name: 'Doomed chat', botToken: VIBER_TOKEN });
  const message = viberMessage(viberToken(1), { id: 'U-doomed', name: 'Vera' }, 'is anyone there?');
  assert.is((await post(service, `/messengertwo/bot/${channel.channelId}`, message, viberHeaders(message, VIBER_TOKEN))).status, 200);
  assert.is((await settledDelivery(service, 'messengertwo', viberToken(1))).state, 'processed');

  const { code } = await caller.notifications.createLinkCode();
  const chatId = 300_000_001;
  assert.is((await post(service, '/messengerone/webhook', JSON.stringify(telegramUpdate(600_000_001, chatId, `/start ${code}`)), telegramHeaders(OPERATOR_SECRET))).status, 200);
  await eventually('the operator chat linked', async () => (await caller.notifications.status()).linked);
  await eventually('the link confirmed to the chat', () => botApi.sent().some((call) => String(call.body.chat_id) === String(chatId)));
  await caller.notifications.createLinkCode();

  const subscriptionId = `sub_01${randomBytes(10).toString('hex')}`;
  const billing = await deliverBilling(service, 'subscription.activated', subscription(subscriptionId, owner.id));
  assert.is(billing.result.status, 200);
  assert.is((await settledDelivery(service, 'billing', billing.event.event_id)).state, 'processed');

  const siteIds = (await service.deps.db.query<{ id: number }>('SELECT id FROM sites WHERE account_id = $1', [owner.id])).map((row) => row.id);
  const channelIds = [channel.channelId];
  assert.equal(await owned(service, owner.id, siteIds, channelIds), {
    accounts: 1,
    sessions: 2,
    email_tokens: 2,
    sites: 1,
    payments: 1,
    channels: 1,
    channel_messages: 1,
    operator_link_codes: 2,
    operator_chats: 1,
  });
  const [sub] = await service.deps.db.query<{ account_id: number | null }>('SELECT account_id FROM billing_subscriptions WHERE subscription_id = $1', [subscriptionId]);
  assert.is(sub.account_id, owner.id);
  return { account, otherSession, siteKey, siteIds, channelIds, subscriptionId };
}

/** Runs `work` once, for whichever test asks first; every later caller gets the same result. */
function once<T>(work: (context: Context) => Promise<T>): (context: Context) => Promise<T> {
  let result: Promise<T> | undefined;
  return (context) => (result ??= work(context));
}

/** The main scenario's account, deleted with its password and a JWT: what it owned, and the answer. */
const deleted = once(async (context: Context) => {
  const furnished = await furnishAccount(context);
  const result = await deleteAccount(context.service, bearer(furnished.account.token), { password: PASSWORD });
  return { furnished, result };
});

test('a wrong password is 401 INVALID_CREDENTIALS: nothing is removed, no account.deleted is recorded, and it counts as a failed login', async ({ service }) => {
  const { account, siteIds, channelIds } = await accountWithSite(service, 'delete.wrong.password@example.com');
  const before = await owned(service, account.user.id, siteIds, channelIds);
  const failedBefore = (await auditRows(service, 'login.failed', account.user.id)).length;
  const wrong = await deleteAccount(service, bearer(account.token), { password: `${PASSWORD}!` });
  assertError(wrong, 401, 'INVALID_CREDENTIALS');
  assert.equal(await owned(service, account.user.id, siteIds, channelIds), before);
  assert.is((await auditRows(service, 'account.deleted', account.user.id)).length, 0);
  assert.is((await auditRows(service, 'login.failed', account.user.id)).length, failedBefore + 1);
  // Still signed in: a wrong password ends no session.
  assert.is((await me(service, bearer(account.token))).status, 200);
  assert.is((await me(service, bearer(account.apiKey))).status, 200);
});

test('with the password and a JWT: 200 {success: true}, and the account row, its sessions, e-mail tokens, sites with payments, channels with messages, link codes and linked chats are gone', async (context) => {
  const { service } = context;
  const { furnished, result } = await deleted(context);
  const { account, siteIds, channelIds } = furnished;
  assert.is(result.status, 200, result.text);
  assert.equal(result.body, { success: true });
  assert.equal(await owned(service, account.user.id, siteIds, channelIds), NOTHING_LEFT);
  assert.is(await count(service, 'sites WHERE site_key = $1', [furnished.siteKey]), 0);
  assert.is(await count(service, 'channels WHERE id = ANY($1::uuid[])', [channelIds]), 0);
});

test('its billing subscriptions stay, with account_id NULL', async (context) => {
  const { service } = context;
  const { furnished } = await deleted(context);
  const rows = await service.deps.db.query<{ account_id: number | null; status: string }>(
    'SELECT account_id, status FROM billing_subscriptions WHERE subscription_id = $1',
    [furnished.subscriptionId],
  );
  assert.equal(rows, [{ account_id: null, status: 'active' }]);
});

test('the JWT from before, the other session and the API key answer 401 on /me, by Bearer and by cookie', async (context) => {
  const { service } = context;
  const { furnished } = await deleted(context);
  const { account, otherSession } = furnished;
  assertError(await me(service, bearer(account.token)), 401, 'UNAUTHORIZED');
  assertError(await me(service, bearer(otherSession)), 401, 'UNAUTHORIZED');
  assertError(await me(service, bearer(account.apiKey)), 401, 'UNAUTHORIZED');
  assertError(await me(service, { cookie: `svc_token=${account.token}` }), 401, 'UNAUTHORIZED');
  assertError(await me(service, { cookie: `svc_token=${otherSession}` }), 401, 'UNAUTHORIZED');
  // And they cannot delete again, or do anything else.
  assertError(await deleteAccount(service, bearer(account.token), { password: PASSWORD }), 401, 'UNAUTHORIZED');
  assertError(await deleteAccount(service, bearer(account.apiKey), { password: PASSWORD }), 401, 'UNAUTHORIZED');
  assertError(await answerOf(callerWith(service, bearer(account.apiKey)).auth.listActivity()), 401, 'UNAUTHORIZED');
});

test('the old password no longer logs in: 401 INVALID_CREDENTIALS, as for an unknown address', async (context) => {
  const { service } = context;
  const { furnished } = await deleted(context);
  const gone = await login(service, furnished.account.email);
  const unknown = await login(service, 'delete.never.existed@example.com');
  assertError(gone, 401, 'INVALID_CREDENTIALS');
  assert.equal(gone.body, unknown.body);
});

test('a notice that the account was deleted reaches the old address, with no secret in it', async (context) => {
  const { service } = context;
  const { furnished } = await deleted(context);
  const { account } = furnished;
  const mail = await service.smtp.waitFor(account.email, (m) => /deleted/i.test(m.subject));
  assert.is(mail.subject, 'Your Gatehouse account was deleted');
  assert.match(mail.text, /deleted/);
  assert.ok(mail.html.length > 0, 'an HTML part too');
  assert.not.match(mail.text, account.apiKey);
  assert.not.match(mail.text, PASSWORD);
});

test('the activity log keeps account.deleted, with account_id NULL', async (context) => {
  const { service } = context;
  const { furnished } = await deleted(context);
  const id = furnished.account.user.id;
  const rows = await auditRows(service, 'account.deleted', id);
  assert.is(rows.length, 1);
  assert.is(rows[0].account_id, null);
  assert.is(rows[0].ip, '127.0.0.1');
  assert.is(Number(rows[0].data?.account_id), id);
  // Nothing of the account's activity stays attached to its id.
  assert.is(await count(service, 'audit_events WHERE account_id = $1', [id]), 0);
});

test('a later billing event naming the deleted account is kept as ignored: unknown account', async (context) => {
  const { service } = context;
  const { furnished } = await deleted(context);
  const id = furnished.account.user.id;
  service.clock.advance(1_000);
  const { event, result } = await deliverBilling(service, 'subscription.updated', subscription(furnished.subscriptionId, id, 'past_due'));
  assert.is(result.status, 200);
  assert.equal(result.body, { ok: true });
  const row = await settledDelivery(service, 'billing', event.event_id);
  assert.is(row.state, 'ignored');
  assert.is(row.reason, `unknown account ${id}`);
  const [sub] = await service.deps.db.query<{ account_id: number | null; status: string }>(
    'SELECT account_id, status FROM billing_subscriptions WHERE subscription_id = $1',
    [furnished.subscriptionId],
  );
  assert.equal(sub, { account_id: null, status: 'active' });
});

test('a payment webhook to the deleted site answers 404 and nothing is kept', async (context) => {
  const { service } = context;
  const { furnished } = await deleted(context);
  const { event, result } = deliverPayment(service, furnished.siteKey, `pi_${randomBytes(8).toString('hex')}`);
  const answer = await result;
  assertError(answer, 404, 'NOT_FOUND');
  assert.equal(await inboxRows(service, 'payment', event.id), []);
});

test('a visitor message to the deleted channel answers 404 and nothing is kept', async (context) => {
  const { service } = context;
  const { furnished } = await deleted(context);
  const [channelId] = furnished.channelIds;
  const message = viberMessage(viberToken(2), { id: 'U-late', name: 'Late' }, 'hello?');
  assertError(await post(service, `/messengertwo/bot/${channelId}`, message, viberHeaders(message, VIBER_TOKEN)), 404, 'NOT_FOUND');
  assert.equal(await inboxRows(service, 'messengertwo', viberToken(2)), []);
});

test('the same address can register again at once: 201, and it becomes a new account with a new id and none of the old one', async (context) => {
  const { service } = context;
  const { furnished } = await deleted(context);
  const { account } = furnished;
  const seen = service.smtp.mailsTo(account.email).length;
  const registered = await request(service.url, 'POST', `${AUTH}/register`, { json: { email: account.email, password: 'a brand new password', name: 'Second Life' } });
  assert.is(registered.status, 201, registered.text);
  // By its link: the notice of the deletion may still be on its way to the same address.
  const mail = await nextMail(service, account.email, seen, /verify-email\?token=/);
  assert.match(mail.subject, /confirm|verify/i);
  assert.is((await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token: linkToken(mail) } })).status, 200);
  const again = await login(service, account.email, 'a brand new password');
  assert.is(again.status, 200, again.text);
  assert.is.not(again.body.user.id, account.user.id);
  assert.is(again.body.user.name, 'Second Life');
  assert.is(again.body.user.plan, 'free');
  assert.is.not(again.body.user.api_key, account.apiKey);
  const callerOfNew = callerFor(service, { id: again.body.user.id, email: account.email, token: again.body.token });
  assert.equal(await callerOfNew.sites.list(), { items: [] });
  assert.equal(await callerOfNew.channels.list(), { items: [] });
  assert.equal(await callerOfNew.notifications.status(), { linked: false, chats: 0 });
  assert.equal(await activityEvents(service, bearer(again.body.token)), ['login.succeeded', 'email.verified', 'account.registered']);
});

test('with the API key as the credential: 200, then the key and the account\'s JWT answer 401 and its rows are gone', async ({ service }) => {
  const account = await registerAndVerify(service, 'delete.by.key@example.com');
  const id = account.user.id;
  const { siteKey } = await callerFor(service, { id, email: account.email, token: account.token }).sites.create({ name: 'Keyed', paymentWebhookSecret: SITE_SECRET });
  assertError(await deleteAccount(service, bearer(account.apiKey), { password: 'not the password' }), 401, 'INVALID_CREDENTIALS');
  assert.is(await count(service, 'accounts WHERE id = $1', [id]), 1);
  const result = await deleteAccount(service, bearer(account.apiKey), { password: PASSWORD });
  assert.is(result.status, 200, result.text);
  assert.equal(result.body, { success: true });
  assertError(await me(service, bearer(account.apiKey)), 401, 'UNAUTHORIZED');
  assertError(await me(service, bearer(account.token)), 401, 'UNAUTHORIZED');
  assertError(await me(service, { cookie: `svc_token=${account.token}` }), 401, 'UNAUTHORIZED');
  assert.equal(await owned(service, id), NOTHING_LEFT);
  assert.is(await count(service, 'sites WHERE site_key = $1', [siteKey]), 0);
  const rows = await auditRows(service, 'account.deleted', id);
  assert.is(rows.length, 1);
  assert.is(rows[0].account_id, null);
  await service.smtp.waitFor(account.email, (m) => m.subject === 'Your Gatehouse account was deleted');
});

test('deleting one account leaves another account and its site untouched', async ({ service }) => {
  const keep = await registerAndVerify(service, 'delete.bystander@example.com');
  const gone = await registerAndVerify(service, 'delete.leaver@example.com');
  const keepCaller = callerFor(service, { id: keep.user.id, email: keep.email, token: keep.token });
  const { siteKey } = await keepCaller.sites.create({ name: 'Stays', paymentWebhookSecret: SITE_SECRET });
  assert.is((await deleteAccount(service, bearer(gone.token), { password: PASSWORD })).status, 200);
  assert.is((await me(service, bearer(keep.token))).status, 200);
  assert.is((await me(service, bearer(keep.apiKey))).status, 200);
  assert.equal((await keepCaller.sites.list()).items.map((item) => item.siteKey), [siteKey]);
  assert.is(await count(service, 'accounts WHERE id = $1', [keep.user.id]), 1);
});

test.run();
