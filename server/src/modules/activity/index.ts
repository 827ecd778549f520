// The activity log's face: every module records its events here (the audit_events table is
// this module's alone). Its procedure (activity.router.ts) is merged into auth.* by
// server/src/router.ts.
export { auditEventsTable, type AuditEventRecord } from './activity.model.ts';
export { AUDIT_EVENTS, type AuditEvent } from './activity.schemas.ts';
export { purgeAuditEvents, recordEvent, userAgentOf } from './activity.service.ts';
