import { z } from 'zod';
import { emailSchema, strictInput } from '../lib/validation.ts';
import { userSchema } from '../modules/accounts/index.ts';
import { auditLineSchema } from '../modules/activity/index.ts';
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

// A path segment or query value over REST, a number over tRPC: either way, a whole number an account id can be.
const accountId = z
  .union([z.number(), z.string().regex(/^[0-9]{1,10}$/, 'must be an account id')])
  .transform(Number)
  .pipe(z.number().int().min(1, 'must be an account id').max(2_147_483_647, 'must be an account id'));

export const accountIdInput = strictInput({
  id: accountId.describe('The account id (`account.id` of the lookup by e-mail), a whole number from 1 to 2147483647'),
});

export const revokedSessionsOutput = z.object({ success: z.literal(true), revoked: z.number().int().describe('How many live sessions ended') });

// The activity export (docs/API.md, Operator API): the REST query, and over tRPC the same with a cursor.
const auditFilterShape = {
  since: instant.optional().describe('Events at or after'),
  until: instant.optional().describe('Events before'),
  account_id: accountId.optional().describe("Only this account's events (its id, a whole number)"),
};

const sinceNotAfterUntil = (input: { since?: string; until?: string }, ctx: z.RefinementCtx) => {
  if (input.since && input.until && Date.parse(input.since) > Date.parse(input.until)) {
    ctx.addIssue({ code: 'custom', path: ['since'], message: 'must not be after until' });
  }
};

export const auditFilterInput = strictInput(auditFilterShape).superRefine(sinceNotAfterUntil);

export const auditExportInput = strictInput({
  ...auditFilterShape,
  cursor: z
    .string()
    .max(1000, 'must be a next_cursor this export gave out')
    .regex(/^[A-Za-z0-9._-]+$/, 'must be a next_cursor this export gave out')
    .optional()
    .describe('next_cursor of the previous page, with the same since, until and account_id; it is sealed, and only this export gives one out'),
}).superRefine(sinceNotAfterUntil);

export const auditExportOutput = z.object({
  success: z.literal(true),
  items: z.array(auditLineSchema).describe('Up to 1000 events, oldest first'),
  next_cursor: z.string().nullable().describe('Where the next page starts (opaque, valid for an hour, for this admin and these filters); null on the last page'),
});

/**
 * Events out's admin schemas belong to the events module (admin.events.ts); they are named
 * here as well so that the CLI, which may read this file before it loads the server, checks
 * its values with the very schemas the API does.
 */
export { eventsAdminSchemas } from '../modules/events/index.ts';

export type ListInboxInput = z.infer<typeof listInboxInput>;
export type ReplayDeliveriesInput = z.infer<typeof replayDeliveriesInput>;
export type AuditFilterInput = z.infer<typeof auditFilterInput>;
export type AuditExportInput = z.infer<typeof auditExportInput>;
