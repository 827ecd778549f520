import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { createEndpoint, deleteEndpoint } from '../../server/src/modules/events/events.service.ts';
import type { EventType } from '../../server/src/modules/events/index.ts';
import { processInboxEntries } from '../../server/src/webhooks/inbox/processor.ts';
import { callerOf, type Caller } from './caller.ts';
import { EventReceiver } from './event-receiver.ts';
import { linkToken } from './smtp.ts';
import { request, startTestApp, type HttpResult, type TestService } from './service.ts';
import { eventually } from './wait.ts';

const stripe = new Stripe('sk_test_x');

export type TestAccount = { id: number; email: string; token: string };

/** Registers, confirms from the real e-mail and logs in, the way a person would. */
export async function createAccount(service: Pick<TestService, 'url' | 'smtp'>, label = 'owner'): Promise<TestAccount> {
  const email = `${label}-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'correct horse battery staple';
  const registered = await request(service.url, 'POST', '/api/v1/auth/register', { json: { email, password, name: label } });
  if (registered.status !== 201) throw new Error(`register answered ${registered.status}: ${registered.text}`);
  const mail = await service.smtp.waitFor(email);
  const verified = await request(service.url, 'POST', '/api/v1/auth/verify-email', { json: { token: linkToken(mail) } });
  if (verified.status !== 200) throw new Error(`verify answered ${verified.status}: ${verified.text}`);
  const login = await request(service.url, 'POST', '/api/v1/auth/login', { json: { email, password } });
  if (login.status !== 200) throw new Error(`login answered ${login.status}: ${login.text}`);
  return { id: login.body.user.id, email, token: login.body.token };
}

/** Server-side tRPC caller with the account's session, through the real procedures. */
export function callerFor(service: Pick<TestService, 'deps'>, account: TestAccount): Caller {
  return callerOf(service, { bearer: account.token });
}

export type { Caller };

/** A running service with one account in it, and that account's caller. */
export type OwnedService = { service: TestService; owner: TestAccount; caller: Caller };

/**
 * The start every webhook suite shares: a service configured by `env`, and an account
 * (`label` names it) to own the suite's sites and channels. A failed sign-up stops the
 * service again, since the suite never gets hold of it to close it.
 */
export async function startWithOwner(env: Record<string, string> = {}, label = 'owner'): Promise<OwnedService> {
  const service = await startTestApp(env);
  try {
    const owner = await createAccount(service, label);
    return { service, owner, caller: callerFor(service, owner) };
  } catch (error) {
    await service.close();
    throw error;
  }
}

/**
 * Kept as the gateway keeps a delivery, but marked dispatched, so the running worker leaves
 * it to the test (the sweeper only takes rows older than 10 s on the service's clock).
 */
export async function keptNotDispatched(service: Pick<TestService, 'deps' | 'clock'>, provider: string, scope: string, payload: string): Promise<string> {
  const id = randomUUID();
  await service.deps.db.query(
    `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at, enqueued_at) VALUES ($1, $2, $3, $4, $5, $6, $6)`,
    [id, provider, scope, `evt_${randomBytes(8).toString('hex')}`, Buffer.from(payload), service.clock.now()],
  );
  return id;
}

/**
 * Applies two worker chunks at once, as two lanes would, in the order that deadlocks if
 * their locks are taken as the entries come: another transaction holds a row (`hold`, a
 * `SELECT … FOR UPDATE`) that the second chunk's first entry needs; once the second waits
 * for it, the first chunk starts; once it waits too, the row is let go. Returns how each
 * chunk ended: 'applied', or the error's message.
 */
export async function applyChunksCrossed(service: Pick<TestService, 'deps'>, hold: { sql: string; params: unknown[] }, first: string[], second: string[]): Promise<[string, string]> {
  const { db } = service.deps;
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let holding = () => {};
  const held = new Promise<void>((resolve) => (holding = resolve));
  const holder = db.transaction(async (tx) => {
    await tx.query(hold.sql, hold.params);
    holding();
    await released;
  });
  const waiting = (count: number) =>
    eventually(`${count} transactions waiting for a lock`, async () => {
      // This database's only: other suites run beside this one on the same server.
      const [row] = await db.query<{ count: number }>(
        'SELECT count(*)::int AS count FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND a.datname = current_database()',
      );
      return row.count >= count || undefined;
    }, 10_000);
  const run = (ids: string[]) => processInboxEntries(service.deps, ids).then(() => 'applied', (error: Error) => error.message);
  try {
    await held;
    const secondRun = run(second);
    await waiting(1);
    const firstRun = run(first);
    await waiting(2);
    release();
    return [await firstRun, await secondRun];
  } finally {
    release();
    await holder;
  }
}

/** Runs `work` with an event endpoint, made by an operator, that wants `events` and sends them to a receiver; both go after. */
export async function withEventEndpoint<T>(service: Pick<TestService, 'deps'>, events: EventType[], work: (receiver: EventReceiver) => Promise<T>): Promise<T> {
  const operator = { accountId: null, request: { ip: '127.0.0.1', requestId: 'test' } };
  const receiver = await EventReceiver.start();
  const { endpoint, secret } = await createEndpoint(service.deps, operator, { url: receiver.url, events });
  receiver.secrets = [secret];
  try {
    return await work(receiver);
  } finally {
    await deleteEndpoint(service.deps, operator, endpoint.id);
    await receiver.close();
  }
}

export const unixNow = (service: Pick<TestService, 'clock'>) => Math.floor(service.clock.now().getTime() / 1000);

// ---------------------------------------------------------------- Stripe

export function stripeEvent(options: { id?: string; type: string; created: number; object: Record<string, unknown> }) {
  return {
    id: options.id ?? `evt_${randomBytes(12).toString('hex')}`,
    object: 'event',
    api_version: '2024-06-20',
    created: options.created,
    data: { object: options.object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: options.type,
  };
}

/** Signed exactly as Stripe signs: stripe-node's own test header helper. */
export function stripeHeaders(payload: string, secret: string, timestamp: number): Record<string, string> {
  return {
    'content-type': 'application/json; charset=utf-8',
    'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }),
    'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
  };
}

// ---------------------------------------------------------------- Paddle

export function paddleEvent(options: { eventId?: string; eventType: string; occurredAt: Date; data: Record<string, unknown> }) {
  return {
    event_id: options.eventId ?? `evt_01${randomBytes(12).toString('hex')}`,
    event_type: options.eventType,
    // Paddle sends microseconds.
    occurred_at: options.occurredAt.toISOString().replace('Z', '123Z'),
    notification_id: `ntf_01${randomBytes(12).toString('hex')}`,
    data: options.data,
  };
}

/** `Paddle-Signature: ts=<unix>;h1=<hex>` with h1 = HMAC-SHA256(secret, ts + ":" + body). */
export function paddleHeaders(payload: string | Buffer, secret: string, timestamp: number): Record<string, string> {
  const h1 = createHmac('sha256', secret).update(`${timestamp}:`).update(payload).digest('hex');
  return { 'content-type': 'application/json', 'paddle-signature': `ts=${timestamp};h1=${h1}` };
}

// ---------------------------------------------------------------- Telegram

let nextMessageId = 1000;

export function telegramUpdate(updateId: number, chatId: number, text: string, from: { id?: number; first_name?: string } = {}) {
  return {
    update_id: updateId,
    message: {
      message_id: nextMessageId++,
      from: { id: from.id ?? chatId, is_bot: false, first_name: from.first_name ?? 'Ana', language_code: 'en' },
      chat: { id: chatId, first_name: from.first_name ?? 'Ana', type: 'private' },
      date: Math.floor(Date.now() / 1000),
      text,
      ...(text.startsWith('/') ? { entities: [{ offset: 0, length: text.split(' ')[0].length, type: 'bot_command' }] } : {}),
    },
  };
}

export function telegramHeaders(secretToken: string | undefined): Record<string, string> {
  return { 'content-type': 'application/json', ...(secretToken === undefined ? {} : { 'x-telegram-bot-api-secret-token': secretToken }) };
}

// ---------------------------------------------------------------- Viber

/**
 * A Viber message callback as text: message_token is a 64-bit integer literal, which
 * JSON.stringify cannot write, so it is spliced in.
 */
export function viberMessage(messageToken: string, sender: { id: string; name: string }, text: string, timestamp = Date.now()): string {
  const body = {
    event: 'message',
    timestamp,
    chat_hostname: 'SN-CHAT-05_',
    message_token: '__TOKEN__',
    sender: { ...sender, avatar: 'https://media-direct.example/avatar.jpg', language: 'en', country: 'PT', api_version: 10 },
    message: { text, type: 'text' },
    silent: false,
  };
  return JSON.stringify(body).replace('"__TOKEN__"', messageToken);
}

export function viberHeaders(payload: string | Buffer, botToken: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-viber-content-signature': createHmac('sha256', botToken).update(payload).digest('hex'),
  };
}

/** A 19-digit token beyond 2^53, like Viber's. */
export function viberToken(n: number): string {
  return (5741311803571721087n + BigInt(n)).toString();
}

// ---------------------------------------------------------------- HTTP

export function post(service: Pick<TestService, 'url'>, path: string, body: string | Buffer, headers: Record<string, string>): Promise<HttpResult> {
  return request(service.url, 'POST', path, { body, headers });
}

/** An inbox row as intake writes it, with the state and age a test needs. */
export async function insertDelivery(service: Pick<TestService, 'deps' | 'clock'>, row: { provider: string; scope?: string; payload: string; state: string; ageMs?: number; externalId?: string }): Promise<string> {
  const id = randomUUID();
  await service.deps.db.query(
    `INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at, state, enqueued_at, processed_at)
     VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $7::text, $6::timestamptz, CASE WHEN $7::text = 'received' THEN NULL ELSE $6::timestamptz END)`,
    [id, row.provider, row.scope ?? '', row.externalId ?? randomUUID(), Buffer.from(row.payload), new Date(service.clock.now().getTime() - (row.ageMs ?? 0)), row.state],
  );
  return id;
}

/** The inbox rows kept for a delivery, by its provider and external id, in every scope (none until it is kept). */
export function inboxRows(service: Pick<TestService, 'deps'>, provider: string, externalId: string) {
  return service.deps.db.query<{ state: string; reason: string | null }>('SELECT state, reason FROM webhook_inbox WHERE provider = $1 AND external_id = $2', [provider, externalId]);
}

/** Waits until the worker has settled a delivery (kept, and no longer `received`); its row. */
export const settledDelivery = (service: Pick<TestService, 'deps'>, provider: string, externalId: string) =>
  eventually(`${provider} delivery ${externalId} settled`, async () => {
    const [row] = await inboxRows(service, provider, externalId);
    return row && row.state !== 'received' ? row : undefined;
  });
