import { z } from 'zod';
import { strictInput } from '../../lib/validation.ts';
import { DELIVERY_STATES } from './events.model.ts';

/** The event types an endpoint may ask for; `ping` is sent only by an admin's test, to one endpoint. */
export const EVENT_TYPES = ['account.created', 'account.updated', 'account.deleted', 'payment.updated', 'message.received', 'security.changed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What `security.changed` says changed; never the secret itself. */
export const SECURITY_CHANGES = ['password', 'api_key', 'mfa', 'sessions_revoked', 'identity'] as const;
export type SecurityChange = (typeof SECURITY_CHANGES)[number];

/** The fields whose change `account.updated` reports. */
export const ACCOUNT_FIELDS = ['email', 'name', 'company', 'plan', 'role'] as const;
export type AccountField = (typeof ACCOUNT_FIELDS)[number];

/** The account as events show it: the user object of /me without its API key. */
export type EventAccount = {
  id: number;
  email: string;
  name: string;
  company: string | null;
  plan: string;
  role: 'user' | 'admin';
  email_verified: boolean;
  created_at: string;
};

/** Each event type and its `data`. */
export type EventData = {
  'account.created': { account: EventAccount };
  'account.updated': { account: EventAccount; changed: AccountField[] };
  'account.deleted': { account_id: number };
  'payment.updated': { site_key: string; account_id: number; reference: string; status: string; amount: number | null; currency: string | null };
  'message.received': { channel_id: string; account_id: number; conversation_id: string; external_user_id: string; text: string };
  'security.changed': { account_id: number; what: SecurityChange };
  ping: Record<string, never>;
};

/** An event as a module hands it to the outbox. */
export type OutboundEvent = { [Type in keyof EventData]: { type: Type; data: EventData[Type] } }[keyof EventData];

// ------------------------------------------------------------------ the admin API (contract 12)

/** Said of a URL with `user:pass@`, at create and update, and by a send to one stored before the rule. */
export const CREDENTIALS_REFUSED = 'must not hold credentials (a user name or password before @): a receiver checks the signature instead';

const parsedUrl = (text: string) => {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
};

const endpointId = z.uuid('must be an endpoint id').describe('The endpoint id (a UUID)');
// Where the host may point is the service's to check (events.targets.ts): it resolves the name.
const url = z
  .string()
  .max(2000)
  .refine((text) => {
    const parsed = parsedUrl(text);
    return parsed !== undefined && (parsed.protocol === 'https:' || parsed.protocol === 'http:') && parsed.hostname !== '';
  }, 'must be an http or https URL')
  .refine((text) => !parsedUrl(text)?.username && !parsedUrl(text)?.password, CREDENTIALS_REFUSED)
  .describe('Where events are POSTed (http or https, without credentials); its host must resolve to public addresses only, or to a range of EVENTS_ALLOWED_NETWORKS');
const eventTypes = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(EVENT_TYPES.length)
  .refine((types) => new Set(types).size === types.length, 'must not name a type twice')
  .describe('The event types it receives; every type when left out');
const description = z.string().trim().max(500).describe('A note for the operators, at most 500 characters');
const instant = z.iso.datetime({ offset: true }).describe('An ISO-8601 date and time, e.g. 2026-11-23T12:00:00Z');

export const endpointSchema = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(z.enum(EVENT_TYPES)).describe('The types it receives (every type when it asked for none)'),
  enabled: z.boolean(),
  created_at: z.string(),
});

export const createEndpointInput = strictInput({ url, events: eventTypes.optional(), description: description.optional() });
export const createEndpointOutput = z.object({
  success: z.literal(true),
  endpoint: endpointSchema,
  secret: z.string().describe('`whsec_` + base64 of 24 random bytes: the signing secret, shown this once'),
});
export const endpointsOutput = z.object({ success: z.literal(true), items: z.array(endpointSchema) });
export const endpointIdInput = strictInput({ id: endpointId });
export const updateEndpointInput = strictInput({
  id: endpointId,
  url: url.optional(),
  events: eventTypes.nullable().optional().describe('The event types it receives; null for every type'),
  enabled: z.boolean().optional().describe('false stops sending (new events are kept as skipped); true sends new events again'),
  description: description.nullable().optional(),
});
export const endpointOutput = z.object({ success: z.literal(true), endpoint: endpointSchema });
export const rotateSecretInput = strictInput({
  id: endpointId,
  grace_seconds: z.number().int().min(0).max(86_400).optional().describe('How long the old secret still signs beside the new one, 0 to 86400 s (default 0)'),
});
export const secretOutput = z.object({ success: z.literal(true), secret: z.string().describe('The new signing secret, shown this once') });

const deliveryFields = {
  id: z.string(),
  endpoint_id: z.string(),
  event_id: z.string().describe('The webhook-id header of every attempt'),
  type: z.string(),
  state: z.enum(DELIVERY_STATES),
  attempts: z.number().int(),
  last_status: z.number().int().nullable().describe('The HTTP status of the last attempt; null when it got no answer'),
  last_error: z.string().nullable(),
  next_attempt_at: z.string().nullable().describe('When it is tried next; null unless pending'),
  created_at: z.string(),
};

export const listDeliveriesInput = strictInput({
  endpoint_id: endpointId.optional(),
  state: z.enum(DELIVERY_STATES).optional(),
  type: z.enum([...EVENT_TYPES, 'ping']).optional(),
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page'),
  limit: z.number().int().min(1).max(200).optional().describe('1 to 200, default 50'),
});
export const deliveriesOutput = z.object({ success: z.literal(true), items: z.array(z.object(deliveryFields)), next_cursor: z.string().nullable() });
export const deliveryIdInput = strictInput({ id: z.uuid('must be a delivery id').describe('The delivery id (a UUID)') });
export const deliveryOutput = z.object({
  success: z.literal(true),
  delivery: z.object({
    ...deliveryFields,
    body: z.string().describe('The body as sent, byte for byte'),
    attempts_log: z
      .array(z.object({ at: z.string(), status: z.number().int().nullable(), error: z.string().nullable(), ms: z.number().int() }))
      .describe('The last 10 attempts, oldest first; `error` holds the start of a failed answer (at most 1 KiB)'),
  }),
});
export const retryDeadInput = strictInput({ id: endpointId, since: instant.optional().describe('Only deliveries made at or after') });
export const retriedOutput = z.object({ success: z.literal(true), retried: z.number().int() });
export const testEndpointOutput = z.object({ success: z.literal(true), delivery_id: z.string() });

export type CreateEndpointInput = z.infer<typeof createEndpointInput>;
export type UpdateEndpointInput = z.infer<typeof updateEndpointInput>;
export type ListDeliveriesInput = z.infer<typeof listDeliveriesInput>;
