// The server's one face: the gateway (gateway/src), the operator CLI (cli/) and the bench
// (bench/) import the server through this file and nothing else; tests/architecture.unit.test.ts
// holds them to it. What is not listed here is the server's own business.

// Settings: read and checked once, from the environment.
export { loadConfig, type Config } from './config.ts';

// Dependencies: the one place that makes connections (opened once DATA_KEY is known to fit), and what it hands down.
export { type Deps, type DepsOverrides } from './deps.ts';
export { openDeps } from './roles/open-deps.ts';

// Procedures: the one app router, called over HTTP by the gateway and in process by the pages and the bench.
export { appRouter, createCaller, type AppRouter } from './router.ts';
// The browser's half of a sign-in through an identity provider: redirects, not procedures (modules/identities).
export { identityFlows } from './router.ts';
export type { ProcedureMeta } from './trpc/procedures.ts';
// What each REST route answers with when it fails, for the OpenAPI document (trpc/rest-meta.ts).
export { routeErrors, type ErrorDeclarations } from './trpc/rest-meta.ts';

// A procedure's context: the caller's credentials and what the transport saw of the request.
export { createContextInner, SESSION_COOKIE, type BrowserWrite, type Context, type Credentials, type RequestInfo, type ResponseControl } from './trpc/context.ts';

// Errors: the closed list of codes, and the one answer any failure becomes.
export { AppError, ERROR_CODES, ERRORS, errorBody, tooLargeMessage, type ErrorCode } from './errors/errors.ts';
export { toErrorResponse } from './errors/response.ts';
export { UNKNOWN_FIELD } from './lib/validation.ts';

// Process roles: the worker, and a failed start told in one line.
export { startWorker, type Worker } from './roles/worker.ts';
export { StartError } from './errors/start-error.ts';
export { describeStartFailure, isStartFailure } from './roles/start-failure.ts';

// The database: a bare connection (for commands that must not migrate), its outages, the schema's state.
export { createDatabase, isDatabaseUnavailable, type Db, type Queryable } from './lib/db.ts';
export { MIGRATIONS, migrationsApplied } from './migrations/index.ts';
export { appliedMigrations } from './lib/migration-status.ts';
export { warnWithoutAutovacuum } from './lib/autovacuum-check.ts';

// Webhooks: the registry of providers, the intake that keeps a verified delivery, the inbox's counts.
export { PROVIDERS } from './webhooks/registry.ts';
export { PROVIDER_NAMES, type AnyWebhookProvider, type ProviderName } from './webhooks/provider.ts';
export { createWebhookIntake } from './webhooks/inbox/intake.ts';
// The bench's receiver without a framework keeps deliveries with the inbox's own writer.
export { createInboxWriter } from './webhooks/inbox/writer.ts';
export { countByProviderAndState, type InboxState } from './webhooks/inbox/repo.ts';
export { INBOX_STATES } from './webhooks/inbox/model.ts';

// Events out: the outbox (the bench writes through it).
export { emitEvent } from './modules/events/index.ts';
// Events out's types and delivery states, for the console's filters.
export { DELIVERY_STATES, EVENT_TYPES } from './modules/events/index.ts';
// What the metrics' gauges read from the database, for whatever serves /metrics.
export { connectMetricReadings } from './metrics-readings.ts';

// Operators: the admin services the CLI calls (the admin procedures call the same), events out's among them.
export * as adminService from './admin/admin.service.ts';
export * as eventsAdminService from './modules/events/events.service.ts';
export type { Actor } from './admin/admin.service.ts';
// The activity export's line, for the gateway's NDJSON route and its place in the OpenAPI document.
export { AUDIT_EVENTS, auditLineSchema, type AuditLine } from './modules/activity/index.ts';
export { countPendingSecrets } from './secrets/reencrypt.ts';

// Access tokens: a new signing key for ACCESS_TOKEN_KEYS (the CLI's `tokens keygen`, the bench's service).
export { newSigningKey } from './lib/access-tokens.ts';
export type { SigningAlgorithm } from './lib/signing-keys.ts';

// Small shared pieces: logging, constant-time comparison, text checks, where a browser may be sent back to, the password hasher's shape.
export { createLogger, type Logger } from './lib/logger.ts';
export { safeEqual } from './lib/crypto.ts';
export { escapeHtml, hasControlCharacter, utf8Text } from './lib/text.ts';
export { safeNextPath } from './lib/next-path.ts';
export type { PasswordHasher } from './lib/passwords.ts';
