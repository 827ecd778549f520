import { Card, Field, Hidden, type Notice } from '../../kit/components.tsx';
import { INBOX_STATES, PROVIDER_NAMES } from '../../../../../server/src/index.ts';
import type { AdminOutputs, FilterErrors } from '../console/console.tsx';
import { ActionForm, anyOf, ConsoleLayout, FilterActions, num, Pager, Select, StateBadge, Table, Time, type OperatorView } from '../console/console.view.tsx';

type List = AdminOutputs['listInbox'];
type Delivery = AdminOutputs['showDelivery']['delivery'];

/** The list's filters as the query has them (text as given; the procedure checks it). */
export type InboxFilter = { provider?: string; state?: string; since?: string; until?: string };

function Filters({ filter, errors = {} }: { filter: InboxFilter; errors?: FilterErrors }) {
  return (
    <form method="get" action="/admin/inbox" class="filters" role="search">
      <div class="filter-row">
        <Select name="provider" label="Provider" options={anyOf(PROVIDER_NAMES)} value={filter.provider} error={errors.provider} />
        <Select name="state" label="State" options={anyOf(INBOX_STATES)} value={filter.state} error={errors.state} />
        <Field name="since" label="Received from (UTC)" form={{ values: { since: filter.since ?? '' }, errors }} autoComplete="off" required={false} hint="e.g. 2026-11-23T12:00:00Z" />
        <Field name="until" label="Received before (UTC)" form={{ values: { until: filter.until ?? '' }, errors }} autoComplete="off" required={false} />
      </div>
      <FilterActions clearHref="/admin/inbox" />
    </form>
  );
}

/** Replays every dead (or, when the list shows ignored ones, ignored) delivery matching the filter shown. */
function ReplayDead({ operator, filter }: { operator: OperatorView; filter: InboxFilter }) {
  const state = filter.state === 'ignored' ? 'ignored' : 'dead';
  const scope = [filter.provider && `from ${filter.provider}`, filter.since && `since ${filter.since}`, filter.until && `before ${filter.until}`].filter(Boolean).join(', ');
  return (
    <Card title={`Replay ${state} deliveries`} id="replay-dead">
      <p class="lead">{`Applies every ${state} delivery${scope ? ` ${scope}` : ''} again through its handler; each takes effect once at most.`}</p>
      <ActionForm action="/admin/inbox/replay" operator={operator} label={`Replay ${state} deliveries`}>
        {filter.provider && <Hidden name="provider" value={filter.provider} />}
        <Hidden name="state" value={state} />
        {filter.since && <Hidden name="since" value={filter.since} />}
        {filter.until && <Hidden name="until" value={filter.until} />}
      </ActionForm>
    </Card>
  );
}

type InboxPageProps = { operator: OperatorView; filter: InboxFilter; list: List; paged: boolean; notice?: Notice; errors?: FilterErrors };

export function InboxPage({ operator, filter, list, paged, notice, errors }: InboxPageProps) {
  const filtered = Object.values(filter).some(Boolean);
  const query = new URLSearchParams(Object.entries(filter).filter((entry): entry is [string, string] => Boolean(entry[1]))).toString();
  return (
    <ConsoleLayout title="Inbound webhooks" operator={operator} section="/admin/inbox" notice={notice} actions path={query ? `/admin/inbox?${query}` : '/admin/inbox'}>
      <Card>
        <Filters filter={filter} errors={errors} />
      </Card>
      <Card>
        <Table
          caption="Deliveries, newest first"
          head={['Received', 'Provider', 'State', num('Attempts'), 'External id', 'Last error or reason']}
          empty={filtered ? 'No delivery matches the filter.' : 'No delivery has come in yet.'}
        >
          {list.items.map((delivery) => (
            <tr>
              <td>
                <a href={`/admin/inbox/${encodeURIComponent(delivery.id)}`}>
                  <Time at={delivery.received_at} />
                </a>
              </td>
              <td>{delivery.provider}</td>
              <td>
                <StateBadge state={delivery.state} />
              </td>
              <td class="num">{delivery.attempts}</td>
              <td class="wrap">{delivery.external_id}</td>
              <td class="wrap">{delivery.last_error ?? delivery.reason ?? '–'}</td>
            </tr>
          ))}
        </Table>
        <Pager path="/admin/inbox" query={filter} nextCursor={list.next_cursor} paged={paged} />
      </Card>
      {!errors && <ReplayDead operator={operator} filter={filter} />}
    </ConsoleLayout>
  );
}

export function InboxDeliveryPage({ operator, delivery, notice }: { operator: OperatorView; delivery: Delivery; notice?: Notice }) {
  return (
    <ConsoleLayout title="Inbound delivery" operator={operator} section="/admin/inbox" notice={notice} actions path={`/admin/inbox/${encodeURIComponent(delivery.id)}`}>
      <p>
        <a href="/admin/inbox">All deliveries</a>
      </p>
      <Card>
        <dl class="details">
          <dt>Id</dt>
          <dd>
            <code>{delivery.id}</code>
          </dd>
          <dt>Provider</dt>
          <dd>{delivery.provider}</dd>
          <dt>Scope</dt>
          <dd>{delivery.scope}</dd>
          <dt>External id</dt>
          <dd>{delivery.external_id}</dd>
          <dt>State</dt>
          <dd>
            <StateBadge state={delivery.state} />
          </dd>
          <dt>Received</dt>
          <dd>
            <Time at={delivery.received_at} />
          </dd>
          <dt>Processed</dt>
          <dd>
            <Time at={delivery.processed_at} empty="not yet" />
          </dd>
          <dt>Attempts</dt>
          <dd>{delivery.attempts}</dd>
          <dt>Last error</dt>
          <dd>{delivery.last_error ?? '–'}</dd>
          <dt>Reason</dt>
          <dd>{delivery.reason ?? '–'}</dd>
        </dl>
      </Card>
      <Card title="Payload, as received">
        <pre class="payload">{delivery.payload}</pre>
      </Card>
      <Card title="Replay">
        <p class="lead">Applies this delivery again through its handler; it takes effect once at most.</p>
        <ActionForm action={`/admin/inbox/${encodeURIComponent(delivery.id)}/replay`} operator={operator} label="Replay this delivery" variant="primary" />
      </Card>
    </ConsoleLayout>
  );
}
