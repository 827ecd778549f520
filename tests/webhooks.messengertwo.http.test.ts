import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startBotApi, type BotApi } from './helpers/bot-api.ts';
import type { TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';
import {
  callerFor,
  createAccount,
  post,
  startWithOwner,
  telegramHeaders,
  telegramUpdate,
  viberHeaders,
  viberMessage,
  viberToken,
  type Caller,
  type TestAccount,
} from './helpers/webhook-fixtures.ts';

// Viber deliveries to POST /messengertwo/bot/{channelId}, signed with the channel's bot token.

const BOT_TOKEN = `4453b6ac1${randomBytes(6).toString('hex')}-e02c5f12174805f9-daec9cbb5448c51f`;
const OPERATOR_SECRET = `op_${randomBytes(16).toString('hex')}`;

let service: TestService;
let botApi: BotApi;
let caller: Caller;
let stranger: TestAccount;
let channelId: string;
let tokenSeq = 0;

test.before(async () => {
  botApi = await startBotApi();
  ({ service, caller } = await startWithOwner({ OPERATOR_BOT_TOKEN: '7000000003:AAH-test', OPERATOR_BOT_SECRET: OPERATOR_SECRET, TELEGRAM_API_URL: botApi.url }));
  stranger = await createAccount(service, 'stranger');
  const channel = await caller.channels.create({ platform: 'messengertwo', name: 'Viber shop', botToken: BOT_TOKEN });
  assert.is(channel.secretToken, null);
  assert.match(channel.webhookUrl, new RegExp(`/messengertwo/bot/${channel.channelId}$`));
  channelId = channel.channelId;
});

test.after(async () => {
  await service?.close();
  await botApi?.close();
});

const path = (id = channelId) => `/messengertwo/bot/${id}`;
const deliver = (payload: string, token = BOT_TOKEN, id = channelId) => post(service, path(id), payload, viberHeaders(payload, token));
const messages = async () => (await caller.channels.messages({ channelId })).items;

test('a signed text message is stored in the conversation of its sender', async () => {
  const res = await deliver(viberMessage(viberToken(tokenSeq++), { id: '01234567890A=', name: 'Ana' }, 'Olá! Do you ship to Porto?'));
  assert.is(res.status, 200);
  assert.equal(res.body, { ok: true });
  // Found by its text: other tests store messages in the same channel.
  const message = await eventually('the message stored', async () => (await messages()).find((m) => m.text === 'Olá! Do you ship to Porto?'));
  assert.is(message.conversationId, '01234567890A=');
  assert.is(message.externalUserId, '01234567890A=');
  assert.is(message.text, 'Olá! Do you ship to Porto?');
});

test('message tokens beyond 2^53 stay distinct: two tokens that round alike are two messages', async () => {
  // 5741311803571721087 and ...088 are the same double; as ids they must not collide.
  const a = viberMessage('9007199254740993', { id: 'U-round', name: 'R' }, 'round one');
  const b = viberMessage('9007199254740992', { id: 'U-round', name: 'R' }, 'round two');
  assert.is((await deliver(a)).status, 200);
  assert.is((await deliver(b)).status, 200);
  await eventually('both messages stored', async () => (await messages()).filter((m) => m.text.startsWith('round ')).length === 2);
  const rows = await service.deps.db.query<{ external_id: string }>(
    `SELECT external_id FROM webhook_inbox WHERE provider = 'messengertwo' AND external_id IN ('9007199254740993', '9007199254740992')`,
  );
  assert.is(rows.length, 2);
});

test('a replayed message_token is answered 200 and stored once', async () => {
  const token = viberToken(tokenSeq++);
  const payload = viberMessage(token, { id: 'U-replay', name: 'Rui' }, 'just once');
  const answers = await Promise.all([deliver(payload), deliver(payload), deliver(payload)]);
  assert.equal(answers.map((a) => a.status), [200, 200, 200]);
  await eventually('the replayed message stored', async () => (await messages()).some((m) => m.text === 'just once'));
  assert.is((await deliver(payload)).status, 200);
  // Rather than a pause for a second message that should not come: the four deliveries are one
  // inbox row, already processed, so nothing is left that could store the message again.
  const inbox = () => service.deps.db.query<{ state: string }>(`SELECT state FROM webhook_inbox WHERE provider = 'messengertwo' AND external_id = $1`, [token]);
  await eventually('the one inbox row processed', async () => (await inbox()).every((row) => row.state === 'processed'));
  assert.equal((await inbox()).map((row) => row.state), ['processed']);
  assert.is((await messages()).filter((m) => m.text === 'just once').length, 1);
});

test('the owner\'s linked operator chats are told about the message', async () => {
  const { code } = await caller.notifications.createLinkCode();
  await post(service, '/messengerone/webhook', JSON.stringify(telegramUpdate(9001, 555001, `/start ${code}`)), telegramHeaders(OPERATOR_SECRET));
  await eventually('the operator chat linked', async () => (await caller.notifications.status()).linked);
  await deliver(viberMessage(viberToken(tokenSeq++), { id: 'U-notify', name: 'Inês' }, 'is anyone there?'));
  const call = await eventually('the notification sent', () => botApi.sent().find((c) => c.body.text.includes('is anyone there?')));
  assert.is(call.body.chat_id, '555001');
  assert.match(call.body.text, /Viber shop/);
  assert.match(call.body.text, /Inês/);
});

test('other events (subscribed, delivered, seen, webhook) are kept and ignored', async () => {
  const events = [
    '{"event":"webhook","timestamp":1736942400001,"chat_hostname":"SN-CHAT-05_","message_token":4912661846655238145}',
    '{"event":"subscribed","timestamp":1736942400002,"chat_hostname":"SN-CHAT-05_","user":{"id":"U-sub","name":"S","api_version":10},"message_token":4912661846655238146}',
    `{"event":"delivered","timestamp":1736942400003,"chat_hostname":"SN-CHAT-05_","message_token":${viberToken(900)},"user_id":"U-sub"}`,
    `{"event":"seen","timestamp":1736942400004,"chat_hostname":"SN-CHAT-05_","message_token":${viberToken(901)},"user_id":"U-sub"}`,
  ];
  for (const payload of events) assert.is((await deliver(payload)).status, 200, payload);
  const before = (await messages()).length;
  await eventually('all four events ignored', async () => {
    const rows = await service.deps.db.query<{ state: string }>(
      `SELECT state FROM webhook_inbox WHERE provider = 'messengertwo' AND scope = $1 AND reason LIKE 'event % is not handled'`,
      [channelId],
    );
    return rows.length === events.length;
  });
  assert.is((await messages()).length, before);
});

test('a wrong or missing signature is 401; another channel\'s token does not verify', async () => {
  const payload = viberMessage(viberToken(tokenSeq++), { id: 'U-forge', name: 'F' }, 'forged');
  assert.is((await deliver(payload, 'attacker-token-000')).status, 401);
  assert.is((await post(service, path(), payload, { 'content-type': 'application/json' })).status, 401);
  assert.is((await post(service, path(), payload, { 'x-viber-content-signature': 'nothex' })).status, 401);
  const other = await callerFor(service, stranger).channels.create({ platform: 'messengertwo', name: 'Other', botToken: 'other-token-123456' });
  const res = await post(service, path(), payload, viberHeaders(payload, 'other-token-123456'));
  assert.is(res.status, 401);
  assert.is(res.body.code, 'INVALID_SIGNATURE');
  assert.is((await deliver(payload, 'other-token-123456', other.channelId)).status, 200, 'it verifies only for its own channel');
  assert.not.ok((await messages()).some((m) => m.text === 'forged'));
});

test('unknown channel 404; a messengerone channel is not a messengertwo bot', async () => {
  const payload = viberMessage(viberToken(tokenSeq++), { id: 'U-x', name: 'X' }, 'x');
  assert.is((await deliver(payload, BOT_TOKEN, '00000000-0000-4000-8000-000000000000')).status, 404);
  assert.is((await deliver(payload, BOT_TOKEN, 'nope')).status, 404);
  const tg = await caller.channels.create({ platform: 'messengerone', name: 'TG', botToken: '123:abcdefgh' });
  assert.is((await deliver(payload, '123:abcdefgh', tg.channelId)).status, 404);
});

test('valid signature over malformed JSON is 400; oversized 413; garbage 401', async () => {
  const broken = '{"event":"message","timestamp":';
  const res = await deliver(broken);
  assert.is(res.status, 400);
  assert.is(res.body.code, 'INVALID_PAYLOAD');
  assert.is((await deliver('{"timestamp": 1}')).status, 400);
  const big = Buffer.alloc(1024 * 1024 + 1, 0x7b);
  assert.is((await post(service, path(), big, viberHeaders(big, BOT_TOKEN))).status, 413);
  assert.is((await post(service, path(), randomBytes(100), { 'x-viber-content-signature': 'ab'.repeat(32) })).status, 401);
});

test('channel data is visible only to its owner', async () => {
  let error: any;
  try {
    await callerFor(service, stranger).channels.messages({ channelId });
  } catch (caught) {
    error = caught;
  }
  assert.is(error?.code, 'NOT_FOUND');
  assert.not.ok((await callerFor(service, stranger).channels.list()).items.some((c) => c.channelId === channelId));
});

test('the bot token is never logged or returned', async () => {
  assert.not.match(service.logs.text(), BOT_TOKEN);
  assert.not.match(JSON.stringify(await caller.channels.list()), BOT_TOKEN);
});

test.run();
