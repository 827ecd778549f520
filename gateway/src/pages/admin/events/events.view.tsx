import { Actions, Alert, Button, Card, Field, Form, type FormState, type Notice } from '../../kit/components.tsx';
import { DELIVERY_STATES, EVENT_TYPES } from '../../../../../server/src/index.ts';
import type { AdminOutputs } from '../console/console.tsx';
import { ActionForm, anyOf, ConsoleLayout, FilterActions, num, Pager, Select, StateBadge, Table, Time, type OperatorView } from '../console/console.view.tsx';

type Endpoint = AdminOutputs['eventEndpoints']['items'][number];
type Deliveries = AdminOutputs['eventDeliveries'];
type Delivery = AdminOutputs['eventDelivery']['delivery'];

/** The deliveries' filters as the query has them. */
export type DeliveryFilter = { endpoint_id?: string; state?: string; type?: string };

/** The form field of an event type's checkbox. */
export const typeField = (type: string) => `event_${type}`;

export const GRACE_OPTIONS = [
  { value: '0', label: 'None: the old secret stops now' },
  { value: '3600', label: 'An hour' },
  { value: '86400', label: '24 hours' },
];

/** The event types as checkboxes; none ticked means every type. */
function EventTypes({ chosen, idPrefix }: { chosen: readonly string[]; idPrefix: string }) {
  return (
    <fieldset class="checks">
      <legend>Event types (none ticked: every type)</legend>
      {EVENT_TYPES.map((type) => (
        <label class="check" for={`${idPrefix}-${type}`}>
          <input type="checkbox" id={`${idPrefix}-${type}`} name={typeField(type)} value="on" checked={chosen.includes(type)} />
          <code>{type}</code>
        </label>
      ))}
    </fieldset>
  );
}

const endpointHref = (id: string) => `/admin/events/endpoints/${encodeURIComponent(id)}`;
const deliveryHref = (id: string) => `/admin/events/deliveries/${encodeURIComponent(id)}`;
const typesText = (endpoint: Endpoint) => (endpoint.events.length === EVENT_TYPES.length ? 'every type' : endpoint.events.join(', '));

function AddEndpoint({ operator, form }: { operator: OperatorView; form?: FormState }) {
  const chosen = EVENT_TYPES.filter((type) => form?.values?.[typeField(type)] === 'on');
  return (
    <Card title="Add an endpoint" id="add-endpoint">
      <Form action="/admin/events/endpoints" csrf={operator.csrf}>
        <Field name="url" label="URL" form={form} idPrefix="add" autoComplete="off" hint="http or https; events are POSTed here, signed." />
        <Field name="description" label="Description" form={form} idPrefix="add" autoComplete="off" required={false} hint="Optional, for operators." />
        <EventTypes chosen={chosen} idPrefix="add" />
        <Actions>
          <Button>Add the endpoint</Button>
        </Actions>
      </Form>
    </Card>
  );
}

function DeliveryFilters({ endpoints, filter }: { endpoints: Endpoint[]; filter: DeliveryFilter }) {
  return (
    <form method="get" action="/admin/events" class="filters" role="search">
      <div class="filter-row">
        <Select name="endpoint_id" label="Endpoint" options={[{ value: '', label: 'Any' }, ...endpoints.map((endpoint) => ({ value: endpoint.id, label: endpoint.url }))]} value={filter.endpoint_id} />
        <Select name="state" label="State" options={anyOf(DELIVERY_STATES)} value={filter.state} />
        <Select name="type" label="Type" options={anyOf([...EVENT_TYPES, 'ping'])} value={filter.type} />
      </div>
      <FilterActions clearHref="/admin/events" />
    </form>
  );
}

export function DeliveriesTable({ deliveries, endpoints, filtered }: { deliveries: Deliveries['items']; endpoints: Endpoint[]; filtered: boolean }) {
  const urlOf = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint.url]));
  return (
    <Table caption="Deliveries, newest first" head={['Made', 'Type', 'Endpoint', 'State', num('Attempts'), 'Last answer']} empty={filtered ? 'No delivery matches the filter.' : 'No event has been sent yet.'}>
      {deliveries.map((delivery) => (
        <tr>
          <td>
            <a href={deliveryHref(delivery.id)}>
              <Time at={delivery.created_at} />
            </a>
          </td>
          <td>
            <code>{delivery.type}</code>
          </td>
          <td class="wrap">{urlOf.get(delivery.endpoint_id) ?? delivery.endpoint_id}</td>
          <td>
            <StateBadge state={delivery.state} />
          </td>
          <td class="num">{delivery.attempts}</td>
          <td class="wrap">{delivery.last_status ?? delivery.last_error ?? '–'}</td>
        </tr>
      ))}
    </Table>
  );
}

type EventsPageProps = {
  operator: OperatorView;
  endpoints: Endpoint[];
  deliveries: Deliveries;
  filter: DeliveryFilter;
  paged: boolean;
  notice?: Notice;
  addForm?: FormState;
};

export function EventsPage({ operator, endpoints, deliveries, filter, paged, notice, addForm }: EventsPageProps) {
  return (
    <ConsoleLayout title="Events out" operator={operator} section="/admin/events" notice={notice} actions>
      <Card title="Endpoints" id="endpoints">
        <Table caption="Where signed events are sent" head={['URL', 'Event types', 'State', 'Added']} empty="No endpoint yet: add one below.">
          {endpoints.map((endpoint) => (
            <tr>
              <td class="wrap">
                <a href={endpointHref(endpoint.id)}>{endpoint.url}</a>
                {endpoint.description && <div class="row-meta">{endpoint.description}</div>}
              </td>
              <td class="wrap">{typesText(endpoint)}</td>
              <td>
                <StateBadge state={endpoint.enabled ? 'enabled' : 'disabled'} />
              </td>
              <td>
                <Time at={endpoint.created_at} />
              </td>
            </tr>
          ))}
        </Table>
      </Card>
      <AddEndpoint operator={operator} form={addForm} />
      <Card title="Deliveries" id="deliveries">
        <DeliveryFilters endpoints={endpoints} filter={filter} />
        <DeliveriesTable deliveries={deliveries.items} endpoints={endpoints} filtered={Object.values(filter).some(Boolean)} />
        <Pager path="/admin/events" query={filter} nextCursor={deliveries.next_cursor} paged={paged} />
      </Card>
    </ConsoleLayout>
  );
}

/** A signing secret, shown once: on the answer to the form that made it, never again. */
export function SecretPage({ operator, endpoint, secret, rotated }: { operator: OperatorView; endpoint: Endpoint; secret: string; rotated: boolean }) {
  return (
    <ConsoleLayout title={rotated ? 'New signing secret' : 'Endpoint added'} operator={operator} section="/admin/events">
      <Card>
        <p class="wrap">{endpoint.url}</p>
        <Alert tone="warning" title="Copy the secret now">
          <p>It is shown this once. The receiver checks each event's signature with it.</p>
        </Alert>
        <code class="secret" id="endpoint-secret">
          {secret}
        </code>
        <a class="button" href={endpointHref(endpoint.id)}>
          I have stored it: go to the endpoint
        </a>
      </Card>
    </ConsoleLayout>
  );
}

type EndpointPageProps = { operator: OperatorView; endpoint: Endpoint; deliveries: Deliveries; notice?: Notice };

export function EndpointPage({ operator, endpoint, deliveries, notice }: EndpointPageProps) {
  const base = endpointHref(endpoint.id);
  return (
    <ConsoleLayout title="Event endpoint" operator={operator} section="/admin/events" notice={notice} actions path={base}>
      <p>
        <a href="/admin/events">All endpoints</a>
      </p>
      <div class="grid">
        <Card title="Endpoint" id="endpoint">
          <dl class="details">
            <dt>URL</dt>
            <dd>{endpoint.url}</dd>
            <dt>Description</dt>
            <dd>{endpoint.description ?? '–'}</dd>
            <dt>Event types</dt>
            <dd>{typesText(endpoint)}</dd>
            <dt>State</dt>
            <dd>
              <StateBadge state={endpoint.enabled ? 'enabled' : 'disabled'} />
            </dd>
            <dt>Added</dt>
            <dd>
              <Time at={endpoint.created_at} />
            </dd>
          </dl>
        </Card>
        <Card title="Send and retry" id="send">
          <div class="action-list">
            <section>
              <h3>Send a test</h3>
              <p class="lead">A ping event (data {'{}'}) to this endpoint alone.</p>
              <ActionForm action={`${base}/test`} operator={operator} label="Send a test" variant="primary" />
            </section>
            <section>
              <h3>Retry dead deliveries</h3>
              <p class="lead">Sends the dead and skipped deliveries again.</p>
              <ActionForm action={`${base}/retry-dead`} operator={operator} label="Retry dead deliveries" />
            </section>
            <section>
              <h3>{endpoint.enabled ? 'Disable' : 'Enable'}</h3>
              <p class="lead">{endpoint.enabled ? 'Nothing is sent while disabled; new events are kept as skipped.' : 'New events are sent again.'}</p>
              <ActionForm action={`${base}/enabled`} operator={operator} fields={{ enabled: endpoint.enabled ? 'false' : 'true' }} label={endpoint.enabled ? 'Disable' : 'Enable'} />
            </section>
          </div>
        </Card>
        <Card title="Event types" id="types">
          <Form action={`${base}/events`} csrf={operator.csrf}>
            <EventTypes chosen={endpoint.events.length === EVENT_TYPES.length ? [] : endpoint.events} idPrefix="types" />
            <Actions>
              <Button variant="secondary" size="small">
                Save the event types
              </Button>
            </Actions>
          </Form>
        </Card>
        <Card title="Signing secret" id="rotate">
          <p class="lead">A new secret; the old one signs beside it during the grace, so receivers can switch.</p>
          <ActionForm action={`${base}/rotate`} operator={operator} label="Rotate the secret">
            <Select name="grace_seconds" label="The old secret keeps signing for" options={GRACE_OPTIONS} value="3600" idPrefix="rotate" />
          </ActionForm>
        </Card>
        <Card title="Latest deliveries" id="endpoint-deliveries" wide>
          <DeliveriesTable deliveries={deliveries.items} endpoints={[endpoint]} filtered={false} />
          <p>
            <a href={`/admin/events?endpoint_id=${encodeURIComponent(endpoint.id)}`}>All of its deliveries</a>
          </p>
        </Card>
        <Card title="Remove" id="remove" danger wide>
          <p class="lead">Removes the endpoint and its deliveries. You are asked to confirm.</p>
          <a class="button button-danger button-small" href={`${base}/remove`}>
            Remove this endpoint
          </a>
        </Card>
      </div>
    </ConsoleLayout>
  );
}

export function DeliveryPage({ operator, delivery, endpoint, notice }: { operator: OperatorView; delivery: Delivery; endpoint?: Endpoint; notice?: Notice }) {
  return (
    <ConsoleLayout title="Event delivery" operator={operator} section="/admin/events" notice={notice} actions path={deliveryHref(delivery.id)}>
      <p>
        <a href="/admin/events">Events out</a>
        {endpoint && (
          <>
            {' · '}
            <a href={endpointHref(endpoint.id)}>Its endpoint</a>
          </>
        )}
      </p>
      <Card>
        <dl class="details">
          <dt>Event</dt>
          <dd>
            <code>{delivery.type}</code> <code>{delivery.event_id}</code>
          </dd>
          <dt>Endpoint</dt>
          <dd>{endpoint?.url ?? delivery.endpoint_id}</dd>
          <dt>State</dt>
          <dd>
            <StateBadge state={delivery.state} />
          </dd>
          <dt>Made</dt>
          <dd>
            <Time at={delivery.created_at} />
          </dd>
          <dt>Next attempt</dt>
          <dd>
            <Time at={delivery.next_attempt_at} empty="none planned" />
          </dd>
          <dt>Attempts</dt>
          <dd>{delivery.attempts}</dd>
        </dl>
      </Card>
      <Card title="Attempts">
        <Table caption="The last 10 attempts, oldest first" head={['When', 'Status', num('Time taken'), 'Answer or error']} empty="Not tried yet.">
          {delivery.attempts_log.map((attempt) => (
            <tr>
              <td>
                <Time at={attempt.at} />
              </td>
              <td>{attempt.status ?? 'no answer'}</td>
              <td class="num">{`${attempt.ms} ms`}</td>
              <td class="wrap">{attempt.error === null ? <span class="muted">–</span> : <pre class="payload payload-small">{attempt.error}</pre>}</td>
            </tr>
          ))}
        </Table>
      </Card>
      <Card title="Body, as sent">
        <pre class="payload">{delivery.body}</pre>
      </Card>
      <Card title="Retry">
        <p class="lead">Sends it again now, from the start of the schedule.</p>
        <ActionForm action={`${deliveryHref(delivery.id)}/retry`} operator={operator} label="Retry this delivery" variant="primary" />
      </Card>
    </ConsoleLayout>
  );
}
