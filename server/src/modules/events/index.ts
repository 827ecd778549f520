// The events module's face: the outbox every module writes its events to, inside the
// transaction of the change (events.outbox.ts); the worker's sender; the operators' services
// (events.service.ts, which the CLI calls; events.router.ts holds their procedures, which the
// admin router merges into admin.* as router.ts takes each module's router by its file).
// The tables (event_endpoints, events, event_deliveries: events.model.ts) are this module's
// alone, and it imports no other module but activity, where its operators' actions are recorded.
export { DELIVERY_STATES, EVENT_TABLES } from './events.model.ts';
export { endpointDisabledNotice } from './events.mails.ts';
export { emitEvent, emitEvents, emitSecurityChange, eventBody, eventOrderingLocks, newEventId } from './events.outbox.ts';
export { endpointBacklogs, endpointRows as eventEndpointRows, oldestPending as oldestPendingEventDeliveries } from './events.repo.ts';
export * as eventsService from './events.service.ts';
export type { Actor } from './events.service.ts';
export { purgeDeliveredEvents } from './events.retention.ts';
export * as eventsAdminSchemas from './events.schemas.ts';
export {
  EVENT_TYPES,
  type AccountField,
  type CreateEndpointInput,
  type EventType,
  type ListDeliveriesInput,
  type OutboundEvent,
  type UpdateEndpointInput,
} from './events.schemas.ts';
export { startEventSender } from './events.sender.ts';
export { newSecret, previousSecretPlace, secretPlace } from './events.signing.ts';
export { checkTarget as checkEventTarget } from './events.targets.ts';
export { redactedUrl } from './events.urls.ts';
