// The activity log's face: every module records its events here (the audit_events table is
// this module's alone). Its procedure (activity.router.ts) is merged into auth.* by
// server/src/router.ts.
export { auditEventsTable } from './activity.model.ts';
export { AUDIT_EVENTS, auditLineSchema, type AuditEvent, type AuditLine } from './activity.schemas.ts';
export { eventCountsByHour, latestOfTypes, type EventFilter, type LatestEventRow } from './activity.repo.ts';
export { AUDIT_PAGE_SIZE, auditEventPages, listActivity, purgeAuditEvents, recordAction, recordEvent, recordEventReturningId, userAgentOf } from './activity.service.ts';
