import type { Deps } from '../deps.ts';
import { recordAction, type AuditEvent } from '../modules/activity/index.ts';
import type { Actor } from '../lib/request.ts';

/** An admin's action (a read too) in the activity log: the acting admin's line, or the CLI's without an account. */
export function audit(deps: Pick<Deps, 'clock'>, db: Parameters<typeof recordAction>[0], actor: Actor, event: AuditEvent, data: Record<string, unknown>) {
  return recordAction(db, deps.clock, actor, event, data);
}

/** Whole seconds from `then` to `now`, never below 0 (clocks of two machines disagree a little); null for no time. */
export const secondsSince = (now: Date, then: Date | null | undefined) => (then ? Math.max(0, Math.floor((now.getTime() - then.getTime()) / 1000)) : null);
