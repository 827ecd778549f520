// The events module's face: the outbox every module writes its events to, inside the
// transaction of the change (events.outbox.ts); the worker's sender; and what the operators'
// services (server/src/admin/admin.events.service.ts) need. The tables (event_endpoints,
// events, event_deliveries: events.model.ts) are this module's alone, and it imports no other
// module, so any module may emit.
export { EVENT_TABLES } from './events.model.ts';
export { endpointDisabledNotice } from './events.mails.ts';
export { emitEvent, emitEvents, emitSecurityChange, eventBody, eventOrderingLocks, newEventId } from './events.outbox.ts';
export * as eventsStore from './events.repo.ts';
export { oldestPending as oldestPendingEventDeliveries } from './events.repo.ts';
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
