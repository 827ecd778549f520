import type { Queryable } from '../../lib/db.ts';
import type { Clock } from '../../lib/clock.ts';
import { randomToken } from '../../lib/crypto.ts';
import { enabledEndpointWants, insertEvents, orderingLockName } from './events.repo.ts';
import type { EventType, OutboundEvent, SecurityChange } from './events.schemas.ts';

/** An event id, the `webhook-id` of every attempt: `msg_` and 24 random characters. */
export const newEventId = () => `msg_${randomToken(18)}`;

/** The body as it will be sent, byte for byte, on every attempt. */
export const eventBody = (event: OutboundEvent, at: Date) => JSON.stringify({ type: event.type, timestamp: at.toISOString(), data: event.data });

/** The account an event is about, whose events an endpoint receives in order. */
function accountOf(event: OutboundEvent): number | null {
  switch (event.type) {
    case 'account.created':
    case 'account.updated':
      return event.data.account.id;
    case 'ping':
      return null;
    default:
      return event.data.account_id;
  }
}

/**
 * Writes the event into the outbox with the caller's query runner: inside the transaction
 * of the change it reports, so that the change and its event commit together or not at all.
 * The worker sends it (events.sender.ts). Never put a secret in `data`.
 */
export function emitEvent(tx: Queryable, clock: Clock, event: OutboundEvent): Promise<void> {
  return emitEvents(tx, clock, [event]);
}

/** Several events as emitEvent writes one, in this order, with one statement. */
export async function emitEvents(tx: Queryable, clock: Clock, events: OutboundEvent[]): Promise<void> {
  const at = clock.now();
  await insertEvents(
    tx,
    events.map((event) => ({ id: newEventId(), type: event.type, accountId: accountOf(event), body: eventBody(event, at), at })),
  );
}

/** `security.changed`: what changed on the account, never the secret itself. */
export function emitSecurityChange(tx: Queryable, clock: Clock, accountId: number, what: SecurityChange): Promise<void> {
  return emitEvent(tx, clock, { type: 'security.changed', data: { account_id: accountId, what } });
}

/**
 * The names of the locks that emitting `type` for these accounts takes (none while no enabled
 * endpoint wants the type), for a transaction that takes all its locks up front: the
 * worker's chunk of webhook effects (webhooks/inbox/processor.ts).
 */
export async function eventOrderingLocks(db: Queryable, type: EventType, accountIds: number[]): Promise<string[]> {
  if (!accountIds.length || !(await enabledEndpointWants(db, type))) return [];
  return accountIds.map(orderingLockName);
}
