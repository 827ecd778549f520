import { eventsAdminSchemas as s } from '../admin/admin.schemas.ts';
import type { EventsAdminService } from './session.ts';
import { printLine, printTable } from './output.ts';

// How the events commands read to a person; with --json they print the API's documents instead.
// The URL, credentials and query included, appears only where the endpoint itself is shown.

type Endpoint = Awaited<ReturnType<EventsAdminService['listEndpoints']>>['items'][number];
type Page = Awaited<ReturnType<EventsAdminService['listDeliveries']>>;
type Shown = Awaited<ReturnType<EventsAdminService['showDelivery']>>['delivery'];

/** A receiver's answer may span lines; a table row may not. */
const oneLine = (text: string | null) => (text === null ? null : text.replace(/\s+/g, ' '));

const typesOf = (endpoint: Endpoint) => (endpoint.events.length === s.EVENT_TYPES.length ? 'all' : endpoint.events.join(','));

function printFields(fields: Array<[string, string | number | null]>): void {
  for (const [name, value] of fields) printLine(`${`${name}:`.padEnd(14)}${value ?? '-'}`);
}

export function printEndpoint(endpoint: Endpoint): void {
  printFields([
    ['id', endpoint.id],
    ['url', endpoint.url],
    ['events', typesOf(endpoint)],
    ['enabled', endpoint.enabled ? 'yes' : 'no (new events are kept as skipped, not sent)'],
    ['description', endpoint.description],
    ['created at', endpoint.created_at],
  ]);
}

export function printEndpoints(endpoints: Endpoint[]): void {
  if (!endpoints.length) return printLine('No endpoints: add one with events endpoints add <url>.');
  printTable(
    ['id', 'enabled', 'events', 'url', 'description'],
    endpoints.map((e) => [e.id, e.enabled ? 'yes' : 'no', typesOf(e), e.url, e.description ?? '-']),
  );
}

/** The secret of `add` and `rotate`, the only time any command shows one. */
export function printSecret(secret: string, endpointId: string): void {
  printLine(`secret:       ${secret}`);
  printLine();
  printLine('The secret is shown this once: give it to the receiver now, which verifies our signatures with it.');
  printLine(`It cannot be shown again; if it is lost, make a new one with events endpoints rotate ${endpointId}.`);
}

export function printDeliveries({ items, next_cursor }: Page): void {
  if (!items.length) return printLine('No deliveries match.');
  printTable(
    ['created at', 'id', 'endpoint', 'type', 'state', 'attempts', 'last status', 'next attempt'],
    items.map((d) => [d.created_at, d.id, d.endpoint_id, d.type, d.state, String(d.attempts), String(d.last_status ?? '-'), d.next_attempt_at ?? '-']),
  );
  if (next_cursor) printLine(`\nMore: add --cursor ${next_cursor}`);
}

export function printDelivery(delivery: Shown): void {
  printFields([
    ['id', delivery.id],
    ['endpoint', delivery.endpoint_id],
    ['event id', delivery.event_id],
    ['type', delivery.type],
    ['state', delivery.state],
    ['created at', delivery.created_at],
    ['attempts', delivery.attempts],
    ['last status', delivery.last_status],
    ['last error', oneLine(delivery.last_error)],
    ['next attempt', delivery.next_attempt_at],
  ]);
  printLine('attempts log:');
  if (!delivery.attempts_log.length) printLine('  none yet');
  else printTable(['  at', 'status', 'ms', 'error'], delivery.attempts_log.map((a) => [`  ${a.at}`, String(a.status ?? '-'), String(a.ms), oneLine(a.error) ?? '-']));
  printLine('body:');
  printLine(delivery.body);
}
