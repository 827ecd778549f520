import { z } from 'zod';

/** Every event the activity log knows; each module records its own through this module's face. */
export const AUDIT_EVENTS = [
  'account.registered',
  'email.verified',
  'login.succeeded',
  'login.failed',
  'login.locked',
  'logout',
  'session.revoked',
  'password.changed',
  'password.reset',
  'api_key.rotated',
  'email.change_requested',
  'email.changed',
  'email.change_cancelled',
  'profile.updated',
  'account.deleted',
  // ADMIN_EMAILS made the account an admin when a link of ours verified its address.
  'account.promoted',
  // The account's sites and channels: the secrets that prove its webhook deliveries.
  'site.created',
  'site.updated',
  'site.deleted',
  'channel.created',
  'channel.updated',
  'channel.deleted',
  // The second factor (modules/mfa).
  'mfa.enabled',
  'mfa.disabled',
  'passkey.added',
  'passkey.removed',
  'recovery_codes.regenerated',
  'recovery_code.used',
  'login.mfa_required',
  'login.mfa_failed',
  // Identity providers (modules/identities).
  'login.oauth',
  'identity.link_started',
  'identity.linked',
  'identity.unlinked',
  // Operators' actions (server/src/admin), each in the acting admin's log (the CLI's without an account).
  'admin.inbox_read',
  'admin.delivery_read',
  'admin.delivery_replayed',
  'admin.deliveries_replayed',
  'admin.deliveries_purged',
  'admin.role_changed',
  'admin.secrets_reencrypted',
  'admin.account_read',
  'admin.sessions_revoked',
  'admin.mfa_reset',
  // The operator's console (server/src/admin/admin.console*.ts).
  'admin.overview_read',
  'admin.accounts_searched',
  'admin.verification_resent',
  // Events out (modules/events): endpoints and their deliveries.
  'admin.event_endpoint_created',
  'admin.event_endpoint_updated',
  'admin.event_endpoint_secret_rotated',
  'admin.event_endpoint_deleted',
  'admin.event_endpoint_tested',
  'admin.event_endpoints_read',
  'admin.event_deliveries_read',
  'admin.event_delivery_retried',
  'admin.event_deliveries_retried',
  'admin.audit_exported',
] as const;
export type AuditEvent = (typeof AUDIT_EVENTS)[number];

export const activityOutput = z.object({
  success: z.literal(true),
  items: z.array(z.object({ event: z.enum(AUDIT_EVENTS), at: z.string(), ip: z.string().nullable(), user_agent: z.string().nullable() })),
});

/**
 * One event as an export gives it out (docs/API.md, Operator API: one NDJSON line each, or an
 * item of `admin.auditExport`): every column of the row, `at` in ISO-8601, `id` as text (a
 * bigserial may outgrow a JSON number's exact range). `data` is what the recording module
 * kept with the event, or null.
 */
export const auditLineSchema = z.object({
  id: z.string().regex(/^[0-9]+$/).describe('The event id, increasing in the order the events were recorded'),
  at: z.string().describe('When it happened (ISO-8601, UTC)'),
  account_id: z.number().int().nullable().describe('Whose log it is in; null for a failed login of an unknown address or an operator CLI command'),
  event: z.enum(AUDIT_EVENTS),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  data: z.record(z.string(), z.unknown()).nullable().describe('What the event recorded beside its name, e.g. the filter of an export'),
});
export type AuditLine = z.infer<typeof auditLineSchema>;
