import { DataTypes } from 'sequelize';
import { declareTable, notNull, nullable, primaryKey } from '../../lib/model.ts';
import type { AuditEvent } from './activity.schemas.ts';

/** A row of `audit_events` (migration 0005), the activity log; every statement on it is in activity.repo.ts. */
export type AuditEventRecord = {
  /** bigserial: pg returns int8 as a string. */
  id: string;
  account_id: number | null;
  event: AuditEvent;
  at: Date;
  ip: string | null;
  user_agent: string | null;
  data: Record<string, unknown> | null;
};

export const auditEventsTable = declareTable<AuditEventRecord>('audit_events', {
  id: primaryKey(DataTypes.BIGINT, { autoIncrement: true }),
  account_id: nullable(DataTypes.INTEGER),
  event: notNull(DataTypes.TEXT),
  at: notNull(DataTypes.DATE),
  ip: nullable(DataTypes.TEXT),
  user_agent: nullable(DataTypes.TEXT),
  data: nullable(DataTypes.JSONB),
});
