// The events module's face: the outbox every module writes its events to, inside the
// transaction of the change (events.outbox.ts); the worker's sender; what the overview and the
// metrics read. The operators' procedures (events.router.ts, merged into admin.*) and their
// service (events.service.ts, which the CLI calls) stand behind it, reached by their files as
// router.ts reaches every module's router: the service names Deps, and deps.ts builds pieces
// of the sessions module, whose files emit through this face, so a face that re-exported it
// would close a cycle.
// The tables (event_endpoints, events, event_deliveries: events.model.ts) are this module's
// alone, and it imports no other module but activity, where its operators' actions are recorded.
export { DELIVERY_STATES, EVENT_TABLES } from './events.model.ts';
export { endpointDisabledNotice } from './events.mails.ts';
export { emitEvent, emitEvents, emitSecurityChange, eventOrderingLocks } from './events.outbox.ts';
export { endpointBacklogs, endpointRows as eventEndpointRows, oldestPending as oldestPendingEventDeliveries } from './events.repo.ts';
export { purgeDeliveredEvents } from './events.retention.ts';
export * as eventsAdminSchemas from './events.schemas.ts';
export {
  EVENT_TYPES,
  type AccountField,
  type EventType,
  type OutboundEvent,
} from './events.schemas.ts';
export { startEventSender } from './events.sender.ts';
export { previousSecretPlace, secretPlace } from './events.signing.ts';
