import { z } from 'zod';
import { emailSchema, strictInput } from '../lib/validation.ts';
import { userSchema } from '../modules/accounts/index.ts';
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

// Accounts (docs/API.md, Operator API): looked up by address, acted on by id.
export const findAccountInput = strictInput({ email: emailSchema.describe('The address the account signs in with (any case)') });

export const accountOutput = z.object({
  success: z.literal(true),
  account: userSchema.omit({ api_key: true }).extend({ mfa: z.boolean().describe('Whether the account has a second factor (TOTP or a passkey)') }),
});

// A path segment over REST, a number over tRPC: either way, a whole number an account id can be.
export const accountIdInput = strictInput({
  id: z
    .union([z.number(), z.string().regex(/^[0-9]{1,10}$/, 'must be an account id')])
    .transform(Number)
    .pipe(z.number().int().min(1, 'must be an account id').max(2_147_483_647, 'must be an account id'))
    .describe('The account id (`account.id` of the lookup by e-mail), a whole number from 1 to 2147483647'),
});

export const revokedSessionsOutput = z.object({ success: z.literal(true), revoked: z.number().int().describe('How many live sessions ended') });

export type ListInboxInput = z.infer<typeof listInboxInput>;
export type ReplayDeliveriesInput = z.infer<typeof replayDeliveriesInput>;
