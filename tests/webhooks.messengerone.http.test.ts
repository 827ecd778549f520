import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startBotApi, type BotApi } from './helpers/bot-api.ts';
import { startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';
import { processInboxEntries } from '../server/src/webhooks/inbox/processor.ts';
import { callerFor, createAccount, inboxRows, keptNotDispatched, post, settledDelivery, telegramHeaders, telegramUpdate, withEventEndpoint, type Caller, type TestAccount } from './helpers/webhook-fixtures.ts';
import { authCacheOf } from '../server/src/modules/sessions/sessions.cache.ts';

// Telegram deliveries: the operator bot (POST /messengerone/webhook) links chats to accounts,
// visitor bots (POST /messengerone/bot/{channelId}) bring messages that are stored and
// forwarded to the linked chats through a local stand-in for the Bot API.

const OPERATOR_TOKEN = `7000000001:${randomBytes(18).toString('base64url')}`;
const OPERATOR_SECRET = `op_${randomBytes(24).toString('base64url')}`;
const VISITOR_BOT_TOKEN = `7000000002:${randomBytes(18).toString('base64url')}`;

let service: TestService;
let botApi: BotApi;
let owner: TestAccount;
let caller: Caller;
let channel: { channelId: string; webhookUrl: string; secretToken: string | null };
let nextUpdateId = 500_000_000;
let nextChatId = 100_000_001;

test.before(async () => {
  botApi = await startBotApi();
  service = await startTestApp({ OPERATOR_BOT_TOKEN: OPERATOR_TOKEN, OPERATOR_BOT_SECRET: OPERATOR_SECRET, TELEGRAM_API_URL: botApi.url });
});

// Each test its own owner and channel: linked chats and stored messages are counted per account.
test.before.each(async () => {
  owner = await createAccount(service, 'owner');
  caller = callerFor(service, owner);
  channel = await caller.channels.create({ platform: 'messengerone', name: 'Support', botToken: VISITOR_BOT_TOKEN });
});

test.after(async () => {
  await service?.close();
  await botApi?.close();
});

// `null` sends no secret header at all.
const operator = (update: object, secret: string | null = OPERATOR_SECRET) =>
  post(service, '/messengerone/webhook', JSON.stringify(update), telegramHeaders(secret ?? undefined));

const visitor = (update: object, secret: string | null = channel.secretToken!, channelId = channel.channelId) =>
  post(service, `/messengerone/bot/${channelId}`, JSON.stringify(update), telegramHeaders(secret ?? undefined));

const sentTo = (chatId: number) => botApi.sent().filter((call) => String(call.body.chat_id) === String(chatId));

/** Waits until every queued send of a text to the chat has completed: sent, or given up (no retry is coming). */
const sendsSettled = (chatId: number, text: string) =>
  eventually(`the sends of "${text}" settled`, async () => {
    const jobs = await service.deps.db.query<{ state: string }>(
      "SELECT state FROM pgboss.job WHERE name = 'telegram-send' AND data->>'chatId' = $1 AND strpos(data->>'text', $2) > 0",
      [String(chatId), text],
    );
    return jobs.length > 0 && jobs.every((job) => job.state === 'completed') ? jobs : undefined;
  });

async function linkChat(account: TestAccount): Promise<number> {
  const chatId = nextChatId++;
  const { code } = await callerFor(service, account).notifications.createLinkCode();
  assert.is((await operator(telegramUpdate(nextUpdateId++, chatId, `/start ${code}`))).status, 200);
  await eventually('the link confirmation sent', () => sentTo(chatId).length > 0);
  return chatId;
}

test('channels.create gives a webhook URL and a Telegram-compatible secret token', () => {
  assert.match(channel.webhookUrl, new RegExp(`/messengerone/bot/${channel.channelId}$`));
  // 32 random bytes in base64url: within Telegram's 1-256 characters of A-Z, a-z, 0-9, _ and -.
  assert.match(channel.secretToken ?? '', /^[A-Za-z0-9_-]{43}$/);
});

test('/start <code> links the chat, replies through the Bot API, and the code is single use', async () => {
  const { code, expiresAt } = await caller.notifications.createLinkCode();
  const expiresIn = new Date(expiresAt).getTime() - service.clock.now().getTime();
  assert.is(expiresIn, 15 * 60_000, 'valid 15 minutes');
  const chatId = nextChatId++;
  const res = await operator(telegramUpdate(nextUpdateId++, chatId, `/start ${code}`));
  assert.is(res.status, 200);
  assert.equal(res.body, { ok: true });
  assert.not.ok('method' in res.body, 'a Telegram answer never carries a method');
  await eventually('the chat linked', async () => (await caller.notifications.status()).linked);
  const [reply] = await eventually('the reply sent', () => sentTo(chatId).length && sentTo(chatId));
  assert.is(reply.token, OPERATOR_TOKEN);
  assert.match(reply.body.text, /linked/i);

  // The same code from another chat: refused, with a reply saying so.
  const otherChat = nextChatId++;
  await operator(telegramUpdate(nextUpdateId++, otherChat, `/start ${code}`));
  const [refusal] = await eventually('the refusal sent', () => sentTo(otherChat).length && sentTo(otherChat));
  assert.match(refusal.body.text, /unknown, used or expired/);
  assert.equal(await caller.notifications.status(), { linked: true, chats: 1 });
  await operator(telegramUpdate(nextUpdateId++, chatId, '/stop'));
  await eventually('the chat unlinked', async () => !(await caller.notifications.status()).linked);
});

test('a chat\'s older /start or /stop never undoes a newer one: out of order, or replayed by an operator', async () => {
  const inboxId = async (updateId: number) =>
    (await service.deps.db.query<{ id: string }>("SELECT id FROM webhook_inbox WHERE provider = 'operator' AND external_id = $1", [String(updateId)]))[0].id;
  const stateOf = async (updateId: number) =>
    (await service.deps.db.query<{ state: string; reason: string | null }>('SELECT state, reason FROM webhook_inbox WHERE id = $1', [await inboxId(updateId)]))[0];
  const chatId = nextChatId++;
  const first = (await caller.notifications.createLinkCode()).code;
  const [start, stop, again] = [nextUpdateId++, nextUpdateId++, nextUpdateId++];
  await operator(telegramUpdate(start, chatId, `/start ${first}`));
  await eventually('linked', async () => (await caller.notifications.status()).linked);
  await operator(telegramUpdate(stop, chatId, '/stop'));
  await eventually('unlinked', async () => !(await caller.notifications.status()).linked);
  const second = (await caller.notifications.createLinkCode()).code;
  await operator(telegramUpdate(again, chatId, `/start ${second}`));
  await eventually('linked again', async () => (await caller.notifications.status()).linked);

  // An operator replays the /stop: applied again, it is older than the /start after it.
  const admin = await createAccount(service, 'admin');
  await service.deps.db.query("UPDATE accounts SET role = 'admin' WHERE id = $1", [admin.id]);
  authCacheOf(service.deps).evictAccount(admin.id);
  await callerFor(service, admin).admin.replayDelivery({ id: await inboxId(stop) });
  await eventually('the replayed /stop applied', async () => (await stateOf(stop)).state === 'ignored');
  assert.match((await stateOf(stop)).reason ?? '', 'a newer /start or /stop of this chat was applied already');
  assert.equal(await caller.notifications.status(), { linked: true, chats: 1 });

  // Out of order: a /stop of update N arriving after the /start of N+1 is ignored too.
  const otherChat = nextChatId++;
  const third = (await caller.notifications.createLinkCode()).code;
  const [late, early] = [nextUpdateId++, nextUpdateId++];
  await operator(telegramUpdate(early, otherChat, `/start ${third}`));
  await eventually('the other chat linked', async () => (await caller.notifications.status()).chats === 2);
  await operator(telegramUpdate(late, otherChat, '/stop'));
  await eventually('the late /stop applied', async () => (await stateOf(late)).state === 'ignored');
  assert.equal(await caller.notifications.status(), { linked: true, chats: 2 });
});

test('a link code expires after 15 minutes', async () => {
  const { code } = await caller.notifications.createLinkCode();
  service.clock.advance(15 * 60_000 + 1_000);
  try {
    const chatId = nextChatId++;
    await operator(telegramUpdate(nextUpdateId++, chatId, `/start ${code}`));
    const [refusal] = await eventually('the refusal sent', () => sentTo(chatId).length && sentTo(chatId));
    assert.match(refusal.body.text, /expired/);
    assert.equal(await caller.notifications.status(), { linked: false, chats: 0 });
  } finally {
    service.clock.set(new Date());
  }
});

test('a visitor text is stored in its conversation and forwarded to every linked chat', async () => {
  const first = await linkChat(owner);
  const second = await linkChat(owner);
  const visitorId = 424242;
  const res = await visitor(telegramUpdate(nextUpdateId++, visitorId, 'Hello, is the shop open?', { first_name: 'Maria' }));
  assert.is(res.status, 200);
  assert.equal(res.body, { ok: true });
  const { items } = await eventually('the message stored', async () => {
    const list = await caller.channels.messages({ channelId: channel.channelId });
    return list.items.length ? list : undefined;
  });
  assert.is(items.length, 1);
  assert.is(items[0].conversationId, String(visitorId));
  assert.is(items[0].externalUserId, String(visitorId));
  assert.is(items[0].text, 'Hello, is the shop open?');
  for (const chatId of [first, second]) {
    const forwarded = await eventually('the message forwarded', () => sentTo(chatId).find((call) => call.body.text.includes('shop open')));
    assert.match(forwarded.body.text, /Support/);
    assert.match(forwarded.body.text, /Maria/);
  }
});

test('a replayed update_id is answered 200 and has one effect: one message, one notification', async () => {
  const chatId = await linkChat(owner);
  const update = telegramUpdate(nextUpdateId++, 777001, 'only once please');
  const answers = await Promise.all([visitor(update), visitor(update), visitor(update)]);
  assert.equal(answers.map((a) => a.status), [200, 200, 200]);
  await eventually('the message forwarded', () => sentTo(chatId).some((call) => call.body.text.includes('only once please')));
  assert.is((await visitor(update)).status, 200);
  // Settled: the update's one inbox row processed, and every send it queued done. Nothing
  // is left to store or send a second time.
  assert.is((await settledDelivery(service, 'messengerone', String(update.update_id))).state, 'processed');
  assert.is((await inboxRows(service, 'messengerone', String(update.update_id))).length, 1, 'kept once');
  await sendsSettled(chatId, 'only once please');
  const stored = (await caller.channels.messages({ channelId: channel.channelId })).items.filter((m) => m.text === 'only once please');
  assert.is(stored.length, 1);
  assert.is(sentTo(chatId).filter((call) => call.body.text.includes('only once please')).length, 1);
});

test('the Bot API failing with 500 and 429 is retried until the notification is delivered', async () => {
  const chatId = await linkChat(owner);
  const before = botApi.calls.length;
  botApi.failNext(1, 500, { chatId });
  botApi.failNext(1, 429, { chatId });
  await visitor(telegramUpdate(nextUpdateId++, 777002, 'retry me'));
  await eventually('the notification delivered after retries', () => sentTo(chatId).some((call) => call.body.text.includes('retry me')));
  const attempts = botApi.calls.slice(before).filter((call) => call.body.chat_id === String(chatId) && call.body.text?.includes('retry me'));
  assert.equal(attempts.map((call) => call.status), [500, 429, 200]);
});

test('a chat that is gone (403) is given up after one try', async () => {
  const chatId = await linkChat(owner);
  const before = botApi.calls.length;
  botApi.failNext(1, 403, { chatId, description: 'Forbidden: bot was blocked by the user' });
  await visitor(telegramUpdate(nextUpdateId++, 777003, 'nobody hears this'));
  const toChat = () => botApi.calls.slice(before).filter((call) => call.body.chat_id === String(chatId) && call.body.text?.includes('nobody hears this'));
  await eventually('the first attempt', () => toChat().length > 0);
  // Given up: its job completed after the one try, so no retry is coming.
  await sendsSettled(chatId, 'nobody hears this');
  assert.is(toChat().length, 1);
  assert.is(sentTo(chatId).filter((call) => call.body.text?.includes('nobody hears this')).length, 0);
});

test('updates other than text messages are kept and ignored', async () => {
  const edited = { update_id: nextUpdateId++, edited_message: { ...telegramUpdate(0, 777004, 'edited').message, edit_date: 1 } };
  const photo = { update_id: nextUpdateId++, message: { ...telegramUpdate(0, 777004, '').message, text: undefined, photo: [{ file_id: 'AgAD', width: 90, height: 90 }] } };
  const member = { update_id: nextUpdateId++, my_chat_member: { chat: { id: 777004, type: 'private' }, from: { id: 777004, is_bot: false, first_name: 'A' }, date: 1 } };
  for (const update of [edited, photo, member]) assert.is((await visitor(update)).status, 200);
  const rows = await eventually('the three updates settled', async () => {
    const found = await service.deps.db.query<{ state: string; reason: string }>(
      `SELECT state, reason FROM webhook_inbox WHERE provider = 'messengerone' AND external_id = ANY($1) AND state <> 'received'`,
      [[edited, photo, member].map((u) => String(u.update_id))],
    );
    return found.length === 3 ? found : undefined;
  });
  assert.ok(rows.every((row) => row.state === 'ignored'));
});

test('wrong, missing or malformed secret tokens are 401 and nothing is kept', async () => {
  const update = telegramUpdate(nextUpdateId++, 777005, 'forged');
  assert.is((await visitor(update, 'not-the-secret')).status, 401);
  assert.is((await visitor(update, null)).status, 401);
  assert.is((await visitor(update, 'bad token with spaces')).status, 401);
  // The operator bot's secret does not open a visitor bot, nor the other way round.
  assert.is((await visitor(update, OPERATOR_SECRET)).status, 401);
  assert.is((await operator(update, channel.secretToken!)).status, 401);
  assert.is((await operator(update, null)).status, 401);
  const rows = await service.deps.db.query(`SELECT 1 FROM webhook_inbox WHERE external_id = $1`, [String(update.update_id)]);
  assert.is(rows.length, 0);
});

test('unknown channels are 404, whatever the id looks like', async () => {
  const update = telegramUpdate(nextUpdateId++, 777006, 'hi');
  assert.is((await visitor(update, channel.secretToken!, '7f1d7d5e-0000-4000-8000-000000000000')).status, 404);
  assert.is((await visitor(update, channel.secretToken!, 'not-a-uuid')).status, 404);
  const viberChannel = await caller.channels.create({ platform: 'messengertwo', name: 'V', botToken: 'viber-token-123456' });
  assert.is((await visitor(update, channel.secretToken!, viberChannel.channelId)).status, 404, 'a messengertwo channel is not a messengerone bot');
});

test('malformed JSON with the right secret is 400; oversized is 413; garbage is 400', async () => {
  const path = `/messengerone/bot/${channel.channelId}`;
  const broken = await post(service, path, '{"update_id": 12, "message": {', telegramHeaders(channel.secretToken!));
  assert.is(broken.status, 400);
  assert.is(broken.body.code, 'INVALID_PAYLOAD');
  const noId = await post(service, path, '{"message": {}}', telegramHeaders(channel.secretToken!));
  assert.is(noId.status, 400);
  const big = await post(service, path, Buffer.alloc(1024 * 1024 + 10, 0x20), telegramHeaders(channel.secretToken!));
  assert.is(big.status, 413);
  const garbage = await post(service, path, randomBytes(300), telegramHeaders(channel.secretToken!));
  assert.is(garbage.status, 400);
  const garbageOperator = await post(service, '/messengerone/webhook', randomBytes(300), telegramHeaders(OPERATOR_SECRET));
  assert.is(garbageOperator.status, 400);
});

test('neither bot token nor secret token is ever logged', async () => {
  const logs = service.logs.text();
  for (const secret of [OPERATOR_TOKEN, OPERATOR_SECRET, VISITOR_BOT_TOKEN, channel.secretToken!]) assert.not.match(logs, secret);
  const list = await caller.channels.list();
  assert.not.match(JSON.stringify(list), VISITOR_BOT_TOKEN);
  assert.not.match(JSON.stringify(list), channel.secretToken!);
});

test('a worker chunk of messages for two accounts, with message.received subscribed, applies them all and sends each event', async () => {
  await withEventEndpoint(service, ['message.received'], async (receiver) => {
    const other = await callerFor(service, await createAccount(service, 'other')).channels.create({ platform: 'messengerone', name: 'Other', botToken: VISITOR_BOT_TOKEN });
    const kept = (channelId: string, text: string) => keptNotDispatched(service, 'messengerone', channelId, JSON.stringify(telegramUpdate(nextUpdateId++, nextChatId++, text)));
    const chunk = [await kept(channel.channelId, 'first of the chunk'), await kept(other.channelId, 'second of the chunk'), await kept(channel.channelId, 'third of the chunk')];
    const applied = await processInboxEntries(service.deps, chunk);
    assert.equal(applied.map((entry) => entry.outcome.state), ['processed', 'processed', 'processed']);
    const texts = (await caller.channels.messages({ channelId: channel.channelId })).items.map((message) => message.text);
    assert.ok(texts.includes('first of the chunk') && texts.includes('third of the chunk'), texts.join(', '));
    const sent = await eventually('three message.received events sent', () => (receiver.delivered().length >= 3 ? receiver.delivered() : undefined));
    assert.equal(sent.map((event) => `${event.type} ${event.data.text}`).sort(), ['message.received first of the chunk', 'message.received second of the chunk', 'message.received third of the chunk']);
  });
});

test.run();
