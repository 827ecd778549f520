import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestApp, type TestService } from './helpers/service.ts';
import { data, trpcOver } from './helpers/trpc-http.ts';
import { eventually } from './helpers/wait.ts';
import { authCacheOf } from '../server/src/modules/sessions/sessions.cache.ts';
import {
  createAccount,
  post,
  stripeEvent,
  stripeHeaders,
  telegramHeaders,
  telegramUpdate,
  unixNow,
  viberHeaders,
  viberMessage,
  viberToken,
  type TestAccount,
} from './helpers/webhook-fixtures.ts';

// sites.update / sites.delete and channels.update / channels.delete: a leaked signing secret,
// bot token or secret token is replaced, or the endpoint removed, and deliveries follow at
// once, on this instance and (on PostgreSQL) on another one that had the old secret cached.

const onServer = Boolean(process.env.DATABASE_URL);
type Context = { service: TestService; alice: TestAccount; bob: TestAccount };
const test = suite<Context>('tRPC sites and channels: secrets replaced, endpoints removed');

test.before(async (context) => {
  context.service = await startTestApp();
  context.alice = await createAccount(context.service, 'alice');
  context.bob = await createAccount(context.service, 'bob');
  // The other instance (below) only sees changes it is told of once its listener is up.
  if (onServer) await eventually('the cache listening', () => authCacheOf(context.service.deps).enabled);
});
test.after(async ({ service }) => {
  await service?.close();
});

const whsec = () => `whsec_${randomBytes(24).toString('base64url')}`;
let eventSeq = 0;

/** A Stripe event for the site, signed with `secret` as stripe-node signs it. */
function payment(service: TestService, siteKey: string, secret: string) {
  const event = stripeEvent({
    id: `evt_manage_${++eventSeq}`,
    type: 'payment_intent.succeeded',
    created: unixNow(service),
    object: { id: `pi_manage_${eventSeq}`, object: 'payment_intent', amount: 1200, currency: 'eur' },
  });
  const payload = JSON.stringify(event);
  return post(service, `/webhook/payment/${siteKey}`, payload, stripeHeaders(payload, secret, unixNow(service)));
}

async function createSite(service: TestService, owner: TestAccount, secret: string): Promise<string> {
  const created = await trpcOver(service).mutation(owner, 'sites.create', { name: 'Shop', paymentWebhookSecret: secret });
  assert.is(created.status, 200, created.text);
  return data(created).siteKey;
}

async function activity(service: TestService, owner: TestAccount): Promise<string[]> {
  return data(await trpcOver(service).query(owner, 'auth.listActivity')).items.map((item: { event: string }) => item.event);
}

test('sites.update replaces the signing secret: the old one is refused at once, the new one accepted', async ({ service, alice }) => {
  const { mutation, query } = trpcOver(service);
  const [before, after] = [whsec(), whsec()];
  const siteKey = await createSite(service, alice, before);
  assert.is((await payment(service, siteKey, before)).status, 200, 'accepted, and its secret now cached');

  const updated = await mutation(alice, 'sites.update', { siteKey, paymentWebhookSecret: `  ${after}  ` });
  assert.is(updated.status, 200, updated.text);
  assert.equal(data(updated), { siteKey, name: 'Shop', webhookUrl: `${service.env.PUBLIC_URL}/webhook/payment/${siteKey}`, createdAt: data(updated).createdAt });
  assert.not.match(updated.text, after);
  const refused = await payment(service, siteKey, before);
  assert.is(refused.status, 401);
  assert.is(refused.body.code, 'INVALID_SIGNATURE');
  assert.is((await payment(service, siteKey, after)).status, 200, 'surrounding whitespace was trimmed, as at create');

  const renamed = await mutation(alice, 'sites.update', { siteKey, name: ' Shop two ' });
  assert.is(data(renamed).name, 'Shop two');
  assert.is(data(await query(alice, 'sites.list')).items.find((site: { siteKey: string }) => site.siteKey === siteKey).name, 'Shop two');
  assert.is((await payment(service, siteKey, after)).status, 200, 'a rename keeps the secret');

  assert.equal((await activity(service, alice)).slice(0, 3), ['site.updated', 'site.updated', 'site.created']);
  const [recorded] = await service.deps.db.query<{ data: unknown }>(
    `SELECT data FROM audit_events WHERE account_id = $1 AND event = 'site.updated' AND data->>'site_key' = $2 ORDER BY id LIMIT 1`,
    [alice.id, siteKey],
  );
  assert.equal(recorded.data, { site_key: siteKey, changed: ['payment_webhook_secret'] });
  assert.not.match(service.logs.text(), after);
});

test('sites.delete: the webhook URL answers 404, the site and its payments are gone', async ({ service, alice }) => {
  const { mutation, query } = trpcOver(service);
  const secret = whsec();
  const siteKey = await createSite(service, alice, secret);
  assert.is((await payment(service, siteKey, secret)).status, 200);
  await eventually('the payment recorded', async () => data(await query(alice, 'sites.payments', { siteKey })).items.length === 1);

  assert.equal(data(await mutation(alice, 'sites.delete', { siteKey })), { success: true });
  const gone = await payment(service, siteKey, secret);
  assert.is(gone.status, 404);
  assert.equal(gone.body, { success: false, code: 'NOT_FOUND', message: 'No such site.' });
  assert.is((await query(alice, 'sites.payments', { siteKey })).status, 404);
  assert.not.ok(data(await query(alice, 'sites.list')).items.some((site: { siteKey: string }) => site.siteKey === siteKey));
  assert.equal(await service.deps.db.query('SELECT 1 FROM payments p JOIN sites s ON s.id = p.site_id WHERE s.site_key = $1', [siteKey]), []);
  assert.is((await activity(service, alice))[0], 'site.deleted');
  const again = await mutation(alice, 'sites.delete', { siteKey });
  assert.is(again.status, 404);
  assert.is(again.body.error.data.appCode, 'NOT_FOUND');
});

test("another account's site or channel cannot be changed or deleted, and stays as it was", async ({ service, alice, bob }) => {
  const { mutation } = trpcOver(service);
  const secret = whsec();
  const siteKey = await createSite(service, alice, secret);
  const channel = data(await mutation(alice, 'channels.create', { platform: 'messengertwo', name: 'VB', botToken: 'viber-token-of-alice' }));
  const attempts: Array<[string, unknown]> = [
    ['sites.update', { siteKey, paymentWebhookSecret: whsec() }],
    ['sites.delete', { siteKey }],
    ['channels.update', { channelId: channel.channelId, botToken: 'viber-token-of-bob' }],
    ['channels.delete', { channelId: channel.channelId }],
  ];
  for (const [path, input] of attempts) {
    const res = await mutation(bob, path, input);
    assert.is(res.status, 404, path);
    assert.is(res.body.error.data.appCode, 'NOT_FOUND', path);
  }
  assert.is((await payment(service, siteKey, secret)).status, 200, "alice's secret still holds");
  const message = viberMessage(viberToken(9_100_001), { id: 'U-1', name: 'V' }, 'still here');
  assert.is((await post(service, `/messengertwo/bot/${channel.channelId}`, message, viberHeaders(message, 'viber-token-of-alice'))).status, 200);
});

test('channels.update: a new bot token (messengertwo) and a new secret token (messengerone) take over at once', async ({ service, alice }) => {
  const { mutation, query } = trpcOver(service);
  const viber = data(await mutation(alice, 'channels.create', { platform: 'messengertwo', name: 'VB', botToken: 'viber-token-before' }));
  const viberPath = `/messengertwo/bot/${viber.channelId}`;
  const first = viberMessage(viberToken(9_200_001), { id: 'U-2', name: 'V' }, 'before');
  assert.is((await post(service, viberPath, first, viberHeaders(first, 'viber-token-before'))).status, 200);
  const changed = await mutation(alice, 'channels.update', { channelId: viber.channelId.toUpperCase(), botToken: 'viber-token-after' });
  assert.is(changed.status, 200, changed.text);
  assert.equal(data(changed), { ...viber, secretToken: null, platform: 'messengertwo', name: 'VB', createdAt: data(changed).createdAt });
  const second = viberMessage(viberToken(9_200_002), { id: 'U-2', name: 'V' }, 'after');
  assert.is((await post(service, viberPath, second, viberHeaders(second, 'viber-token-before'))).status, 401);
  assert.is((await post(service, viberPath, second, viberHeaders(second, 'viber-token-after'))).status, 200);

  const telegram = data(await mutation(alice, 'channels.create', { platform: 'messengerone', name: 'TG', botToken: '123456:AA-telegram-token' }));
  const telegramPath = `/messengerone/bot/${telegram.channelId}`;
  const update = (n: number) => JSON.stringify(telegramUpdate(9_300_000 + n, 930_001, `hello ${n}`));
  assert.is((await post(service, telegramPath, update(1), telegramHeaders(telegram.secretToken))).status, 200);
  const rotated = data(await mutation(alice, 'channels.update', { channelId: telegram.channelId, rotateSecretToken: true, name: 'TG 2' }));
  assert.match(rotated.secretToken, /^[A-Za-z0-9_-]{43}$/);
  assert.is.not(rotated.secretToken, telegram.secretToken);
  assert.is(rotated.name, 'TG 2');
  assert.is((await post(service, telegramPath, update(2), telegramHeaders(telegram.secretToken))).status, 401);
  assert.is((await post(service, telegramPath, update(3), telegramHeaders(rotated.secretToken))).status, 200);
  assert.not.match(JSON.stringify(data(await query(alice, 'channels.list'))), rotated.secretToken);
  assert.not.match(service.logs.text(), rotated.secretToken);
  assert.equal((await activity(service, alice)).slice(0, 2), ['channel.updated', 'channel.created']);
});

test('channels.delete: deliveries answer 404 and the messages are gone', async ({ service, alice }) => {
  const { mutation, query } = trpcOver(service);
  const channel = data(await mutation(alice, 'channels.create', { platform: 'messengertwo', name: 'Doomed', botToken: 'viber-token-doomed' }));
  const path = `/messengertwo/bot/${channel.channelId}`;
  const message = viberMessage(viberToken(9_400_001), { id: 'U-3', name: 'V' }, 'kept until deleted');
  assert.is((await post(service, path, message, viberHeaders(message, 'viber-token-doomed'))).status, 200);
  await eventually('the message stored', async () => data(await query(alice, 'channels.messages', { channelId: channel.channelId })).items.length === 1);

  assert.equal(data(await mutation(alice, 'channels.delete', { channelId: channel.channelId })), { success: true });
  const later = viberMessage(viberToken(9_400_002), { id: 'U-3', name: 'V' }, 'too late');
  assert.is((await post(service, path, later, viberHeaders(later, 'viber-token-doomed'))).status, 404);
  assert.is((await query(alice, 'channels.messages', { channelId: channel.channelId })).status, 404);
  assert.equal(await service.deps.db.query('SELECT 1 FROM channel_messages WHERE channel_id = $1', [channel.channelId]), []);
  assert.is((await activity(service, alice))[0], 'channel.deleted');
});

test('garbage and missing credentials are clear 4xx, and change nothing', async ({ service, alice }) => {
  const { mutation } = trpcOver(service);
  const secret = whsec();
  const siteKey = await createSite(service, alice, secret);
  const viber = data(await mutation(alice, 'channels.create', { platform: 'messengertwo', name: 'VB', botToken: 'viber-token-kept' }));
  const cases: Array<[string, unknown, number, string, string?]> = [
    ['sites.update', { siteKey }, 400, 'VALIDATION_FAILED', '(body)'],
    ['sites.update', { siteKey, paymentWebhookSecrets: whsec() }, 400, 'VALIDATION_FAILED', '(body)'],
    ['sites.update', { siteKey, paymentWebhookSecret: 'short' }, 400, 'VALIDATION_FAILED', 'paymentWebhookSecret'],
    ['sites.update', { siteKey, name: '   ' }, 400, 'VALIDATION_FAILED', 'name'],
    ['sites.update', { paymentWebhookSecret: whsec() }, 400, 'VALIDATION_FAILED', 'siteKey'],
    ['sites.update', { siteKey: 'site\u0000x', name: 'x' }, 400, 'VALIDATION_FAILED'],
    ['sites.update', { siteKey: 'site_nothing', name: 'x' }, 404, 'NOT_FOUND'],
    ['sites.delete', { siteKey: 42 }, 400, 'VALIDATION_FAILED', 'siteKey'],
    ['sites.delete', 'site', 400, 'VALIDATION_FAILED'],
    ['channels.update', { channelId: viber.channelId }, 400, 'VALIDATION_FAILED', '(body)'],
    ['channels.update', { channelId: viber.channelId, rotateSecretToken: 'yes' }, 400, 'VALIDATION_FAILED', 'rotateSecretToken'],
    ['channels.update', { channelId: viber.channelId, rotateSecretToken: true }, 400, 'VALIDATION_FAILED', 'rotateSecretToken'],
    ['channels.update', { channelId: viber.channelId, botToken: 'x' }, 400, 'VALIDATION_FAILED', 'botToken'],
    ['channels.update', { channelId: 'not-a-uuid', name: 'x' }, 404, 'NOT_FOUND'],
    ['channels.delete', { channelId: 'not-a-uuid' }, 404, 'NOT_FOUND'],
    ['channels.delete', {}, 400, 'VALIDATION_FAILED', 'channelId'],
  ];
  for (const [path, input, status, code, field] of cases) {
    const res = await mutation(alice, path, input);
    const label = `${path} ${JSON.stringify(input)}`;
    assert.is(res.status, status, `${label}: ${res.text}`);
    assert.is(res.body.error.data.appCode, code, label);
    if (field) assert.ok(res.body.error.data.issues.some((issue: { path: string }) => issue.path === field), `${label}: ${res.text}`);
  }
  for (const path of ['sites.update', 'sites.delete', 'channels.update', 'channels.delete']) {
    const res = await mutation(undefined, path, { siteKey, channelId: viber.channelId, name: 'x' });
    assert.is(res.status, 401, path);
    assert.is(res.body.error.data.appCode, 'UNAUTHORIZED', path);
  }
  const broken = await service.deps.db.query('SELECT 1 FROM sites WHERE site_key = $1 AND name = $2', [siteKey, 'Shop']);
  assert.is(broken.length, 1, 'the site is as it was');
  assert.is((await payment(service, siteKey, secret)).status, 200, 'and its secret too');
  const message = viberMessage(viberToken(9_500_001), { id: 'U-4', name: 'V' }, 'unchanged');
  assert.is((await post(service, `/messengertwo/bot/${viber.channelId}`, message, viberHeaders(message, 'viber-token-kept'))).status, 200);
});

if (onServer) {
  test('another instance that had the old secret cached refuses it as soon as the change is committed', async ({ service, alice }) => {
    const other = await startTestApp({}, { joining: service });
    try {
      await eventually('the other instance listening', () => authCacheOf(other.deps).enabled);
      const [before, after] = [whsec(), whsec()];
      const siteKey = await createSite(service, alice, before);
      assert.is((await payment(other, siteKey, before)).status, 200, 'the other instance now holds the old secret');
      assert.ok(other.deps.webhookSecrets.get(`payment:${siteKey}`), 'and has it cached');

      assert.is((await trpcOver(service).mutation(alice, 'sites.update', { siteKey, paymentWebhookSecret: after })).status, 200);
      await eventually('the other instance refusing the old secret', async () => (await payment(other, siteKey, before)).status === 401);
      assert.is((await payment(other, siteKey, after)).status, 200);

      assert.is((await trpcOver(service).mutation(alice, 'sites.delete', { siteKey })).status, 200);
      await eventually('the other instance answering 404', async () => (await payment(other, siteKey, after)).status === 404);
    } finally {
      await other.close();
    }
  });

  test('AUTH_CACHE=off: with no notices to hear, an instance looks each secret up and never accepts a replaced one', async ({ service, alice }) => {
    const uncached = await startTestApp({ AUTH_CACHE: 'off' }, { joining: service });
    try {
      const [before, after] = [whsec(), whsec()];
      const siteKey = await createSite(service, alice, before);
      assert.is((await payment(uncached, siteKey, before)).status, 200);
      assert.is(uncached.deps.webhookSecrets.get(`payment:${siteKey}`), undefined, 'nothing kept');
      assert.is((await trpcOver(service).mutation(alice, 'sites.update', { siteKey, paymentWebhookSecret: after })).status, 200);
      assert.is((await payment(uncached, siteKey, before)).status, 401);
      assert.is((await payment(uncached, siteKey, after)).status, 200);
    } finally {
      await uncached.close();
    }
  });
}

test.run();
