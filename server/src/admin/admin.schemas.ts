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

// The operator's console (docs/API.md, Operator API): the overview, and accounts searched, shown and changed.
const accountSummary = accountOutput.shape.account;
const ROLES = ['user', 'admin'] as const;

export const setRoleInput = strictInput({
  id: accountIdInput.shape.id,
  role: z.enum(ROLES).describe('`admin` may call the admin.* procedures; `user` may not'),
});

export const searchAccountsInput = strictInput({
  q: z
    .string()
    .trim()
    .max(254, 'must be at most 254 characters')
    .optional()
    .describe('The start of an e-mail address (any case; a whole address is its own prefix) or an account id; every account without it'),
  cursor: z.string().regex(/^[0-9]{1,10}$/, 'must be a next_cursor this list gave out').optional().describe('next_cursor of the previous page'),
  limit: z.number().int().min(1).max(200).optional().describe('1 to 200, default 50'),
});

export const searchAccountsOutput = z.object({
  success: z.literal(true),
  items: z.array(accountSummary.omit({ company: true })).describe('Newest first'),
  next_cursor: z.string().nullable().describe('Where the next page starts; null on the last page'),
});

export const accountDetailsOutput = z.object({
  success: z.literal(true),
  account: accountSummary,
  identities: z.array(
    z.object({
      provider: z.string().describe('The identity provider (OAUTH_PROVIDERS)'),
      subject: z.string().describe("The provider's id of the person"),
      email: z.string().nullable().describe('The address the provider gave when the link was made'),
      linked_at: z.string(),
    }),
  ),
  sessions: z
    .array(
      z.object({
        id: z.string(),
        created_at: z.string(),
        last_used_at: z.string().nullable(),
        ip: z.string().nullable(),
        user_agent: z.string().nullable().describe('The device, as its browser named itself'),
        via: z.string().describe('How the session began: `password`, `passkey`, or the name of the identity provider'),
      }),
    )
    .describe('Live sessions, newest first'),
  activity: z
    .array(z.object({ event: z.string(), at: z.string(), ip: z.string().nullable(), user_agent: z.string().nullable() }))
    .describe("The account's latest 20 events, newest first"),
});

export const setRoleOutput = z.object({
  success: z.literal(true),
  account: accountSummary,
  changed: z.boolean().describe('false when the account had the role already'),
});

export const overviewOutput = z.object({
  success: z.literal(true),
  accounts: z.object({
    total: z.number().int(),
    verified: z.number().int().describe('With a confirmed address'),
    mfa: z.number().int().describe('With a second factor (TOTP or a passkey)'),
    new_7d: z.number().int().describe('Made in the last 7 days'),
  }),
  logins: z
    .array(
      z.object({
        hour: z.string().describe('The start of the hour (UTC)'),
        succeeded: z.number().int().describe('Sign-ins that made a session (a password with its second step, a passkey, an identity provider)'),
        failed: z.number().int().describe('Wrong passwords, wrong second-step codes, and tries refused by the failed-login limits'),
      }),
    )
    .describe('The last 24 hours, oldest first, the current one last'),
  inbox: inboxStatsOutput.shape.providers,
  endpoints: z.array(
    z.object({
      id: z.string(),
      url: z.string(),
      enabled: z.boolean(),
      oldest_pending_seconds: z.number().int().nullable().describe('Age of its oldest delivery still to be sent, null when none waits'),
    }),
  ),
  recent_actions: z
    .array(
      z.object({
        at: z.string(),
        admin_id: z.number().int().nullable().describe('The acting admin; null for the CLI and for ADMIN_EMAILS'),
        type: z.string().describe('The activity log event, e.g. admin.role_changed or account.promoted'),
        account_id: z.number().int().nullable().describe('The account acted on, when the action was on one'),
      }),
    )
    .describe('The 10 latest changes by admins (reads are not listed), newest first'),
});

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
 * Events out's admin schemas belong to the events module (modules/events/events.router.ts); they are named
 * here as well so that the CLI, which may read this file before it loads the server, checks
 * its values with the very schemas the API does.
 */
export { eventsAdminSchemas } from '../modules/events/index.ts';

export type ListInboxInput = z.infer<typeof listInboxInput>;
export type ReplayDeliveriesInput = z.infer<typeof replayDeliveriesInput>;
export type AuditFilterInput = z.infer<typeof auditFilterInput>;
export type AuditExportInput = z.infer<typeof auditExportInput>;
export type SearchAccountsInput = z.infer<typeof searchAccountsInput>;
export type Role = (typeof ROLES)[number];
