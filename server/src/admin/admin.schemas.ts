import { z } from 'zod';
import { strictInput } from '../lib/validation.ts';
import { INBOX_STATES } from '../webhooks/inbox/repo.ts';
import { PROVIDER_NAMES } from '../webhooks/provider.ts';

const provider = z.enum(PROVIDER_NAMES).describe('The endpoint a delivery came in on');
const instant = z.iso.datetime({ offset: true }).describe('An ISO-8601 date and time, e.g. 2026-11-23T12:00:00Z');

export const inboxStatsOutput = z.object({
  success: z.literal(true),
  providers: z.array(
    z.object({
      provider,
      received: z.number().int(),
      processed: z.number().int(),
      ignored: z.number().int(),
      dead: z.number().int(),
      oldest_pending_seconds: z.number().int().nullable().describe('Age of the oldest delivery still waiting, null when none waits'),
    }),
  ),
});

export const listInboxInput = strictInput({
  provider: provider.optional(),
  state: z.enum(INBOX_STATES).optional(),
  since: instant.optional().describe('Received at or after'),
  until: instant.optional().describe('Received before'),
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page'),
  limit: z.number().int().min(1).max(200).optional().describe('1 to 200, default 50'),
});

const deliveryFields = {
  id: z.string(),
  provider,
  scope: z.string(),
  external_id: z.string(),
  state: z.enum(INBOX_STATES),
  received_at: z.string(),
  processed_at: z.string().nullable(),
  attempts: z.number().int(),
  last_error: z.string().nullable(),
  reason: z.string().nullable().describe('Why an ignored delivery was ignored (an event type not acted on, an unknown account, …)'),
};

export const listInboxOutput = z.object({
  success: z.literal(true),
  items: z.array(z.object(deliveryFields)),
  next_cursor: z.string().nullable(),
});

export const deliveryIdInput = strictInput({ id: z.string().min(1).max(100) });

export const deliveryOutput = z.object({
  success: z.literal(true),
  delivery: z.object({ ...deliveryFields, payload: z.string().describe('The body as received, as text') }),
});

export const replayDeliveriesInput = strictInput({
  provider: provider.optional(),
  state: z.enum(['dead', 'ignored']).optional().describe('Default dead'),
  since: instant.optional(),
  until: instant.optional(),
});

export const replayedOutput = z.object({ success: z.literal(true), replayed: z.number().int() });

export type ListInboxInput = z.infer<typeof listInboxInput>;
export type ReplayDeliveriesInput = z.infer<typeof replayDeliveriesInput>;
