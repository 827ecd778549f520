import { createHash, randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { TestService } from './helpers/service.ts';
import { data, trpcOver, type TrpcHttp } from './helpers/trpc-http.ts';
import { createAccount, post, startWithOwner, telegramHeaders, telegramUpdate, type TestAccount } from './helpers/webhook-fixtures.ts';

// The sites, channels and notifications procedures over tRPC's HTTP protocol (plain JSON,
// no transformer). This service has neither BILLING_WEBHOOK_SECRET nor OPERATOR_BOT_SECRET.

let service: TestService;
let alice: TestAccount;
let bob: TestAccount;
let mutation: TrpcHttp['mutation'];
let query: TrpcHttp['query'];

test.before(async () => {
  ({ service, owner: alice } = await startWithOwner({}, 'alice'));
  bob = await createAccount(service, 'bob');
  ({ mutation, query } = trpcOver(service));
});

test.after(async () => {
  await service?.close();
});


test('sites.create returns a site key and the public webhook URL; list shows it', async () => {
  // An account of its own: the lists hold exactly what this test made.
  const owner = await createAccount(service, 'sites');
  const res = await mutation(owner, 'sites.create', { name: '  Alice shop  ', paymentWebhookSecret: 'whsec_alice_0123456789' });
  assert.is(res.status, 200);
  const { siteKey, webhookUrl } = data(res);
  assert.match(siteKey, /^site_[A-Za-z0-9_-]{24}$/, '18 random bytes in base64url');
  assert.is(webhookUrl, `${service.env.PUBLIC_URL}/webhook/payment/${siteKey}`);
  assert.not.match(res.text, 'whsec_alice');
  const list = data(await query(owner, 'sites.list'));
  assert.is(list.items.length, 1);
  assert.is(list.items[0].siteKey, siteKey);
  assert.is(list.items[0].name, 'Alice shop');
  assert.is(list.items[0].webhookUrl, webhookUrl);
  assert.is(list.items[0].createdAt, service.clock.now().toISOString());
  assert.equal(Object.keys(list.items[0]).sort(), ['createdAt', 'name', 'siteKey', 'webhookUrl']);
  assert.equal(data(await query(owner, 'sites.payments', { siteKey })), { items: [] });
});

test('another account cannot see a site: list omits it and payments is 404', async () => {
  const { siteKey } = data(await mutation(alice, 'sites.create', { name: 'Private', paymentWebhookSecret: 'whsec_private_0123' }));
  assert.equal(data(await query(bob, 'sites.list')), { items: [] });
  const res = await query(bob, 'sites.payments', { siteKey });
  assert.is(res.status, 404);
  assert.is(res.body.error.data.appCode, 'NOT_FOUND');
  assert.is((await query(alice, 'sites.payments', { siteKey: 'site_nothing' })).status, 404);
});

test('channels.create: messengerone gets a secret token once, messengertwo gets null', async () => {
  // An account of its own: the lists hold exactly what this test made.
  const owner = await createAccount(service, 'channels');
  const one = data(await mutation(owner, 'channels.create', { platform: 'messengerone', name: 'TG', botToken: '123456:AA-telegram-token' }));
  assert.match(one.channelId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.is(one.webhookUrl, `${service.env.PUBLIC_URL}/messengerone/bot/${one.channelId}`);
  assert.match(one.secretToken, /^[A-Za-z0-9_-]{43}$/, '32 random bytes in base64url, as Telegram allows');
  const two = data(await mutation(owner, 'channels.create', { platform: 'messengertwo', name: 'VB', botToken: 'viber-token-abcdef' }));
  assert.is(two.secretToken, null);
  assert.is(two.webhookUrl, `${service.env.PUBLIC_URL}/messengertwo/bot/${two.channelId}`);
  const list = data(await query(owner, 'channels.list'));
  const rows = list.items.map((item: any) => [item.channelId, item.platform, item.name, item.webhookUrl]).sort((a: string[], b: string[]) => a[1].localeCompare(b[1]));
  assert.equal(rows, [
    [one.channelId, 'messengerone', 'TG', one.webhookUrl],
    [two.channelId, 'messengertwo', 'VB', two.webhookUrl],
  ]);
  assert.not.match(JSON.stringify(list), one.secretToken);
  assert.not.match(JSON.stringify(list), 'telegram-token');
  assert.equal(data(await query(owner, 'channels.messages', { channelId: one.channelId })), { items: [] });
  assert.is((await query(bob, 'channels.messages', { channelId: one.channelId })).status, 404);
  assert.is((await query(bob, 'channels.messages', { channelId: 'not-a-uuid' })).status, 404);
  assert.equal(data(await query(bob, 'channels.list')), { items: [] });
});

test('notifications: a fresh account is not linked; link codes are distinct and expire in 15 minutes', async () => {
  assert.equal(data(await query(alice, 'notifications.status')), { linked: false, chats: 0 });
  const first = data(await mutation(alice, 'notifications.createLinkCode'));
  const second = data(await mutation(alice, 'notifications.createLinkCode'));
  // Twelve characters that cannot be misread (no 0/O, 1/I/L), in two groups of six.
  assert.match(first.code, /^[A-HJKMNP-Z2-9]{6}-[A-HJKMNP-Z2-9]{6}$/);
  assert.is.not(first.code, second.code);
  const ttl = Date.parse(first.expiresAt) - service.clock.now().getTime();
  assert.is(ttl, 15 * 60_000);
  const rows = await service.deps.db.query<{ code_hash: Buffer }>('SELECT code_hash FROM operator_link_codes WHERE account_id = $1', [alice.id]);
  const hashOf = (code: string) => createHash('sha256').update(code.replace(/-/g, '')).digest('hex');
  assert.equal(rows.map((r) => r.code_hash.toString('hex')).sort(), [hashOf(first.code), hashOf(second.code)].sort(), 'only hashes are stored');
});

test('every procedure needs a session', async () => {
  for (const path of ['sites.list', 'channels.list', 'notifications.status']) {
    const res = await query(undefined, path);
    assert.is(res.status, 401, path);
    assert.is(res.body.error.data.appCode, 'UNAUTHORIZED');
  }
  for (const path of ['sites.create', 'channels.create', 'notifications.createLinkCode']) {
    assert.is((await mutation(undefined, path, {})).status, 401, path);
  }
});

test('invalid input is 400 with the field named', async () => {
  const cases: Array<[string, unknown, string]> = [
    ['sites.create', { name: '', paymentWebhookSecret: 'whsec_0123456789' }, 'name'],
    ['sites.create', { name: 'x', paymentWebhookSecret: 'short' }, 'paymentWebhookSecret'],
    ['channels.create', { platform: 'smoke-signals', name: 'x', botToken: '0123456789' }, 'platform'],
    ['channels.create', { platform: 'messengertwo', name: 'x', botToken: '' }, 'botToken'],
  ];
  for (const [path, input, field] of cases) {
    const res = await mutation(alice, path, input);
    assert.is(res.status, 400, `${path} ${field}`);
    assert.is(res.body.error.data.appCode, 'VALIDATION_FAILED');
    assert.ok(res.body.error.data.issues.some((issue: any) => issue.path === field), field);
  }
});

test('billing and operator webhooks answer 503 while their secrets are not configured', async () => {
  const billing = await post(service, '/billingprovider/webhook', '{}', { 'paddle-signature': 'ts=1;h1=00' });
  assert.is(billing.status, 503);
  assert.equal(billing.body, { success: false, code: 'SERVICE_UNAVAILABLE', message: billing.body.message });
  const operator = await post(service, '/messengerone/webhook', JSON.stringify(telegramUpdate(1, 1, '/start X')), telegramHeaders('anything'));
  assert.is(operator.status, 503);
  assert.is(operator.body.code, 'SERVICE_UNAVAILABLE');
});

test('secrets given to the procedures never reach the logs', async () => {
  const secret = `whsec_${randomBytes(16).toString('hex')}`;
  const botToken = `999:${randomBytes(16).toString('hex')}`;
  await mutation(alice, 'sites.create', { name: 'Logged?', paymentWebhookSecret: secret });
  const channel = data(await mutation(alice, 'channels.create', { platform: 'messengerone', name: 'Logged?', botToken }));
  const logs = service.logs.text();
  for (const value of [secret, botToken, channel.secretToken]) assert.not.match(logs, value);
});

test.run();
