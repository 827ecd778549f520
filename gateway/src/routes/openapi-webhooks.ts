import type { OpenAPIObject, SchemaObject } from 'openapi3-ts/oas31';
import { z } from 'zod';
import { PROVIDERS, type AnyWebhookProvider, type ProviderName } from '../../../server/src/index.ts';
import { errorResponse, tagsOf } from './openapi-document.ts';

type Loose = Record<string, any>;

/** What the document says about one provider's endpoint beyond what the registry knows. */
type WebhookDoc = {
  summary: string;
  description: string;
  /** The header the scheme checks, as the provider spells it, and how its value is made. */
  signature: { header: string; description: string; example: string };
  /** The route's `:scope`, named as readers know it. */
  scope?: { name: string; description: string; example: string; schema: SchemaObject };
  /** The variable whose absence makes the endpoint answer 503 (endpoints without a scope). */
  unconfigured?: string;
  example: Record<string, unknown>;
};

const TIMESTAMP_WINDOW = 'The timestamp must be within 300 s of our clock, either way.';
const CHANNEL_ID: WebhookDoc['scope'] = {
  name: 'channelId',
  description: 'The channel, from `channels.create` (its `webhookUrl` ends with it).',
  example: '3f0c9a52-8d1e-4b7a-9c2f-5e6d7a8b9c0d',
  schema: { type: 'string', format: 'uuid' },
};
const telegramUpdate = (text: string) => ({
  update_id: 718294021,
  message: {
    message_id: 1187,
    from: { id: 58211934, is_bot: false, first_name: 'Ana', language_code: 'en' },
    chat: { id: 58211934, first_name: 'Ana', type: 'private' },
    date: 1795435082,
    text,
  },
});

/** Keyed by provider name: a provider added to the registry without a line here does not type-check. */
const WEBHOOK_DOCS: Record<ProviderName, WebhookDoc> = {
  billing: {
    summary: 'Billing provider (Paddle Billing) events',
    description: "`subscription.*` events set the plan of the account named by `data.custom_data.account_id` (the best of its live subscriptions). Deduplicated on `event_id`.",
    signature: {
      header: 'Paddle-Signature',
      description: `\`ts=<unix seconds>;h1=<hex>\` (several \`h1\` while a secret rotates; any may match): the hex HMAC-SHA256 of \`ts + ":" + body\`, keyed by any secret of \`BILLING_WEBHOOK_SECRET\`. ${TIMESTAMP_WINDOW}`,
      example: 'ts=1795435082;h1=9b1f0c6a3e2d4b5f8a7c6e5d4c3b2a190f8e7d6c5b4a39281706f5e4d3c2b1a0',
    },
    unconfigured: 'BILLING_WEBHOOK_SECRET',
    example: {
      event_id: 'evt_01jd8v3k7w2m9x4q5r6s7t8u9v',
      event_type: 'subscription.updated',
      occurred_at: '2026-11-23T12:18:02.621022Z',
      notification_id: 'ntf_01jd8v3k9a1b2c3d4e5f6g7h8j',
      data: {
        id: 'sub_01jd8v2z4y5x6w7v8u9t0s1r2q',
        status: 'active',
        custom_data: { account_id: '42' },
        items: [{ price: { id: 'pri_01jd8tzz8q7p6n5m4k3j2h1g0f' }, quantity: 1 }],
      },
    },
  },
  payment: {
    summary: "A client site's payment provider (Stripe) events",
    description: "Checkout session, payment intent and refund events set the state of the site's payment. Deduplicated on the event `id` per site.",
    signature: {
      header: 'Stripe-Signature',
      description: `\`t=<unix seconds>,v1=<hex>\` (several \`v1\` while a secret rolls; any may match): the hex HMAC-SHA256 of \`t + "." + body\`, keyed by the site's \`paymentWebhookSecret\`. ${TIMESTAMP_WINDOW}`,
      example: 't=1795435082,v1=5d2e8f1a4b7c0d3e6f9a2b5c8d1e4f7a0b3c6d9e2f5a8b1c4d7e0f3a6b9c2d5e',
    },
    scope: {
      name: 'siteKey',
      description: 'The site, from `sites.create` (its `webhookUrl` ends with it).',
      example: 'site_Jq8mXk9pL3vR2tYw5nBz7cDe',
      schema: { type: 'string', maxLength: 200 },
    },
    example: {
      id: 'evt_1QxYz2AbCdEfGhIj',
      object: 'event',
      api_version: '2024-06-20',
      created: 1795435082,
      type: 'checkout.session.completed',
      data: { object: { id: 'cs_test_a1B2c3D4e5F6', object: 'checkout.session', payment_intent: 'pi_3QxYz2AbCdEfGhIj', payment_status: 'paid', amount_total: 4900, currency: 'eur' } },
      livemode: false,
      pending_webhooks: 1,
    },
  },
  operator: {
    summary: 'Operator bot (messenger one, Telegram) updates',
    description: '`/start <code>` with a code from `notifications.createLinkCode` links the chat to that account; `/stop` unlinks it. Deduplicated on `update_id`.',
    signature: {
      header: 'X-Telegram-Bot-Api-Secret-Token',
      description: 'Equal to `OPERATOR_BOT_SECRET`, the `secret_token` given to the operator bot\'s `setWebhook` (1 to 256 of `A-Z a-z 0-9 _ -`). Telegram signs nothing: it echoes this.',
      example: 'op_5f2a9c1e7b3d8f4a6c0e2b9d',
    },
    unconfigured: 'OPERATOR_BOT_SECRET',
    example: telegramUpdate('/start K7QF-2M9D'),
  },
  messengerone: {
    summary: 'Visitor bot (messenger one, Telegram) updates',
    description: "A text message is stored in the channel's conversation with its sender, and the owner's linked chats are notified. Deduplicated on (`channelId`, `update_id`).",
    signature: {
      header: 'X-Telegram-Bot-Api-Secret-Token',
      description: "Equal to the channel's `secretToken` (from `channels.create`), given to the bot's `setWebhook` as `secret_token`. Telegram signs nothing: it echoes this.",
      example: 'Wc7dK2pX9mQ4vL8sT1nB5yR3',
    },
    scope: CHANNEL_ID,
    example: telegramUpdate('Hello! Do you ship to Porto?'),
  },
  messengertwo: {
    summary: 'Visitor bot (messenger two, Viber) callbacks',
    description: "A `message` event with text is stored in the channel's conversation with its sender. Deduplicated on `message_token` (else the event's own id).",
    signature: {
      header: 'X-Viber-Content-Signature',
      description: "The hex HMAC-SHA256 of the body, keyed by the channel's `botToken`.",
      example: 'c1e4a7d0b3f6e9c2a5d8b1e4f7a0c3d6e9b2f5a8c1d4e7b0a3f6c9e2d5b8a1f4',
    },
    scope: CHANNEL_ID,
    example: {
      event: 'message',
      timestamp: 1795435082114,
      chat_hostname: 'SN-CHAT-05_',
      message_token: 5741311803571721,
      sender: { id: '01234567890A=', name: 'Ana', language: 'en', country: 'PT', api_version: 10 },
      message: { type: 'text', text: 'Olá! Do you ship to Porto?' },
      silent: false,
    },
  },
};

const OK_SCHEMA: SchemaObject = { type: 'object', required: ['ok'], additionalProperties: false, properties: { ok: { type: 'boolean', enum: [true] } } };

/**
 * The request body's schema: the scheme's own zod schema of the fields its parser reads, as
 * JSON Schema (the draft OpenAPI 3.1 uses), so the reference cannot drift from the check.
 */
function payloadSchema(provider: AnyWebhookProvider): SchemaObject {
  const { $schema: _draft, ...schema } = z.toJSONSchema(provider.payload, { io: 'input' });
  return schema as SchemaObject;
}

/** `/webhook/payment/:scope` as the document writes it: `/webhook/payment/{siteKey}`. */
export function documentedPath(provider: AnyWebhookProvider): string {
  const scope = WEBHOOK_DOCS[provider.name].scope;
  return scope ? provider.route.replace(':scope', `{${scope.name}}`) : provider.route;
}

function responsesOf(provider: AnyWebhookProvider, doc: WebhookDoc): Loose {
  const notFound = provider.notFound ?? 'Not found.';
  const unavailable = doc.unconfigured
    ? `\`${doc.unconfigured}\` is not set, or the delivery could not be stored (database away); the provider retries`
    : 'The delivery could not be stored (database away); the provider retries';
  return {
    '200': {
      description: 'Kept: it is applied in the background. A repeated delivery gets the same answer and has no second effect.',
      content: { 'application/json': { schema: OK_SCHEMA, example: { ok: true } } },
    },
    '400': errorResponse(400, 'Signed, but not a payload the scheme can read (not JSON, a field it is known by missing, a NUL in any field, an id over 255 characters); nothing is kept', { codes: ['INVALID_PAYLOAD', 'VALIDATION_FAILED'] }),
    '401': errorResponse(401, `\`${doc.signature.header}\` is missing, malformed or wrong; nothing is kept`, { codes: ['INVALID_SIGNATURE'] }),
    ...(provider.scope ? { '404': errorResponse(404, `${notFound.replace(/\.$/, '')}: the ${doc.scope?.name} is unknown`, { codes: ['NOT_FOUND'] }) } : {}),
    '413': errorResponse(413, 'The body is over 1 MiB: answered at once and the connection closed', { codes: ['PAYLOAD_TOO_LARGE'] }),
    '503': errorResponse(503, unavailable, { codes: ['SERVICE_UNAVAILABLE'] }),
  };
}

function operationOf(provider: AnyWebhookProvider, publicUrl: string): Loose {
  const doc = WEBHOOK_DOCS[provider.name];
  const parameters: Loose[] = [];
  if (doc.scope) {
    parameters.push({ in: 'path', name: doc.scope.name, required: true, description: doc.scope.description, schema: doc.scope.schema, example: doc.scope.example });
  }
  parameters.push({
    in: 'header',
    name: doc.signature.header,
    required: true,
    description: `The provider's signature over this delivery (not a Gatehouse credential). ${doc.signature.description}`,
    schema: { type: 'string' },
    example: doc.signature.example,
  });
  return {
    operationId: `webhook-${provider.name}`,
    tags: ['webhooks'],
    summary: doc.summary,
    description: `${doc.description} The signature is checked over the exact bytes before anything is parsed; a verified delivery is stored before the answer.`,
    // The webhook routes sit at the root of PUBLIC_URL, beside /api/v1, not under it.
    servers: [{ url: publicUrl, description: 'This Gatehouse (PUBLIC_URL): webhook routes are not under /api/v1' }],
    // The signature header is the provider's proof of origin, not one of our security schemes.
    security: [],
    parameters,
    requestBody: {
      required: true,
      description: "The provider's JSON, as it sends it (at most 1 MiB). Fields besides those listed are kept as sent.",
      content: { 'application/json': { schema: payloadSchema(provider), example: doc.example } },
    },
    responses: responsesOf(provider, doc),
  };
}

/**
 * The published document: the REST routes plus one operation per provider of the webhook
 * registry, so a provider added there is documented (or the build fails on WEBHOOK_DOCS).
 */
export function withWebhookRoutes(document: OpenAPIObject, publicUrl: string): OpenAPIObject {
  const paths: Loose = { ...document.paths };
  for (const provider of PROVIDERS) paths[documentedPath(provider)] = { post: operationOf(provider, publicUrl) };
  const published = { ...document, paths };
  return { ...published, tags: tagsOf(published) };
}
