import { Card, Field } from '../../kit/components.tsx';
import { AUDIT_EVENTS } from '../../../../../server/src/index.ts';
import { eventLabel } from '../../kit/wording.ts';
import { FILTER_REFUSED, type AdminOutputs, type FilterErrors } from '../console/console.tsx';
import { anyOf, ConsoleLayout, FilterActions, Pager, Select, Table, Time, UserAgent, type OperatorView } from '../console/console.view.tsx';

type AuditPageData = AdminOutputs['auditExport'];

/** The audit filters as the query has them; `type` is the page's own, the others the export's. */
export type AuditFilter = { account_id?: string; type?: string; since?: string; until?: string };

/** The export's REST address for these filters: the NDJSON download (recorded as every export is). */
function downloadHref(filter: AuditFilter): string {
  const params = new URLSearchParams();
  for (const name of ['account_id', 'since', 'until'] as const) if (filter[name]) params.set(name, filter[name]);
  const query = params.toString();
  return `/api/v1/admin/audit${query ? `?${query}` : ''}`;
}

/** `data` of an event, as short text: it is whatever the event recorded, shown as text, never markup. */
const dataText = (data: Record<string, unknown> | null) => (data ? JSON.stringify(data) : '–');

type AuditPageProps = { operator: OperatorView; filter: AuditFilter; page: AuditPageData; paged: boolean; errors?: FilterErrors };

export function AuditPage({ operator, filter, page, paged, errors }: AuditPageProps) {
  const items = filter.type ? page.items.filter((item) => item.event === filter.type) : page.items;
  const filtered = Object.values(filter).some(Boolean);
  return (
    <ConsoleLayout title="Audit" operator={operator} section="/admin/audit" notice={errors ? FILTER_REFUSED : undefined}>
      <Card>
        <form method="get" action="/admin/audit" class="filters" role="search">
          <div class="filter-row">
            <Field name="account_id" label="Account id" form={{ values: { account_id: filter.account_id ?? '' }, errors }} autoComplete="off" required={false} inputMode="numeric" />
            <Select name="type" label="Type" options={anyOf(AUDIT_EVENTS)} value={filter.type} error={errors?.type} />
            <Field name="since" label="From (UTC)" form={{ values: { since: filter.since ?? '' }, errors }} autoComplete="off" required={false} hint="e.g. 2026-11-23T12:00:00Z" />
            <Field name="until" label="Before (UTC)" form={{ values: { until: filter.until ?? '' }, errors }} autoComplete="off" required={false} />
          </div>
          <FilterActions clearHref="/admin/audit">
            <a class="button button-secondary" href={downloadHref(filter)} download="audit.ndjson">
              Download NDJSON
            </a>
          </FilterActions>
          <p class="hint">The download is every event of the account and time filters (not the type), one JSON object a line; it is recorded as an export.</p>
        </form>
      </Card>
      <Card>
        <Table
          caption={filter.type ? `Events of this type among this page's ${page.items.length}, oldest first` : 'Events, oldest first, up to 1,000 a page'}
          head={['When', 'Account', 'Event', 'Address', 'Device', 'Data']}
          empty={filtered ? 'No event matches the filter on this page.' : 'No event recorded yet.'}
        >
          {items.map((item) => (
            <tr>
              <td>
                <Time at={item.at} />
              </td>
              <td>{item.account_id === null ? <span class="muted">–</span> : <a href={`/admin/accounts/${item.account_id}`}>{`#${item.account_id}`}</a>}</td>
              <td>
                <code>{item.event}</code>
                {eventLabel(item.event) !== item.event && <div class="row-meta">{eventLabel(item.event)}</div>}
              </td>
              <td>{item.ip ?? '–'}</td>
              <td>
                <UserAgent value={item.user_agent} />
              </td>
              <td class="wrap data-cell">
                <code class="data">{dataText(item.data)}</code>
              </td>
            </tr>
          ))}
        </Table>
        <Pager path="/admin/audit" query={filter} nextCursor={page.next_cursor} paged={paged} />
      </Card>
    </ConsoleLayout>
  );
}
