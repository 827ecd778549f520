import { Card } from '../../kit/components.tsx';
import type { AdminOutputs } from '../console/console.tsx';
import { age, ConsoleLayout, num, Stat, StateBadge, Table, Time, type OperatorView } from '../console/console.view.tsx';

type Overview = AdminOutputs['overview'];

const CHART = { width: 640, height: 220, left: 36, right: 8, top: 12, bottom: 34 };

/** A round top for the axis: 1, 2, 5 times a power of ten, at least the highest count. */
function niceMax(value: number): number {
  if (value <= 4) return 4;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

const hourOf = (iso: string) => `${new Date(iso).toISOString().slice(11, 13)}:00`;

/**
 * Sign-ins per hour as bars, drawn here as SVG with presentation attributes (the CSP refuses
 * `style=` and scripts). Told apart without colour: succeeded is a solid bar, failed a
 * hatched one with an outline, and the legend says which is which. The table beside it
 * holds the same numbers for screen readers.
 */
export function LoginsChart({ logins }: { logins: Overview['logins'] }) {
  const { width, height, left, right, top, bottom } = CHART;
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const max = niceMax(Math.max(0, ...logins.map((hour) => Math.max(hour.succeeded, hour.failed))));
  const slot = plotWidth / Math.max(1, logins.length);
  const bar = Math.max(2, (slot - 4) / 2);
  const y = (count: number) => top + plotHeight - (count / max) * plotHeight;
  const ticks = [0, max / 2, max];
  return (
    <svg class="chart" viewBox={`0 0 ${width} ${height + 24}`} role="img" aria-labelledby="logins-chart-title" xmlns="http://www.w3.org/2000/svg">
      <title id="logins-chart-title">Sign-ins (solid) and failed sign-ins (hatched) per hour over the last 24 hours, UTC</title>
      <defs>
        <pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
          <rect width="6" height="6" fill="#fdf0ee" />
          <line x1="0" y1="0" x2="0" y2="6" stroke="#b42318" stroke-width="3" />
        </pattern>
      </defs>
      {ticks.map((tick) => (
        <g>
          <line x1={left} x2={width - right} y1={y(tick)} y2={y(tick)} stroke="#dde2e8" stroke-width="1" />
          <text x={left - 6} y={y(tick) + 4} text-anchor="end" font-size="11" fill="#5a6472">
            {String(tick)}
          </text>
        </g>
      ))}
      {logins.map((hour, index) => {
        const x = left + index * slot + 2;
        return (
          <g>
            <rect x={x} y={y(hour.succeeded)} width={bar} height={top + plotHeight - y(hour.succeeded)} fill="#2350c8">
              <title>{`${hourOf(hour.hour)} UTC: ${hour.succeeded} signed in`}</title>
            </rect>
            <rect x={x + bar} y={y(hour.failed)} width={bar} height={top + plotHeight - y(hour.failed)} fill="url(#hatch)" stroke="#b42318" stroke-width="1">
              <title>{`${hourOf(hour.hour)} UTC: ${hour.failed} failed`}</title>
            </rect>
            {index % 3 === 0 && (
              <text x={x + bar} y={height - bottom + 16} text-anchor="middle" font-size="11" fill="#5a6472">
                {hourOf(hour.hour)}
              </text>
            )}
          </g>
        );
      })}
      <line x1={left} x2={width - right} y1={top + plotHeight} y2={top + plotHeight} stroke="#5a6472" stroke-width="1" />
      <g>
        <rect x={left} y={height + 4} width="14" height="12" fill="#2350c8" />
        <text x={left + 20} y={height + 14} font-size="12" fill="#18202c">
          Signed in (solid)
        </text>
        <rect x={left + 150} y={height + 4} width="14" height="12" fill="url(#hatch)" stroke="#b42318" stroke-width="1" />
        <text x={left + 170} y={height + 14} font-size="12" fill="#18202c">
          Failed (hatched)
        </text>
      </g>
    </svg>
  );
}

function LoginsCard({ logins }: { logins: Overview['logins'] }) {
  const total = logins.reduce((sum, hour) => ({ succeeded: sum.succeeded + hour.succeeded, failed: sum.failed + hour.failed }), { succeeded: 0, failed: 0 });
  return (
    <Card title="Sign-ins, last 24 hours" id="logins" wide>
      <p class="lead">{`${total.succeeded} signed in, ${total.failed} failed. Hours in UTC.`}</p>
      <div class="chart-pair">
        <LoginsChart logins={logins} />
        <div class="chart-table">
          <Table caption="Sign-ins per hour (UTC)" head={['Hour', num('Signed in'), num('Failed')]} empty="No hours to show.">
            {logins.map((hour) => (
              <tr>
                <td>
                  <time dateTime={hour.hour}>{`${hourOf(hour.hour)} UTC`}</time>
                </td>
                <td class="num">{hour.succeeded}</td>
                <td class="num">{hour.failed}</td>
              </tr>
            ))}
          </Table>
        </div>
      </div>
    </Card>
  );
}

function InboxCard({ inbox }: { inbox: Overview['inbox'] }) {
  return (
    <Card title="Inbound webhooks" id="inbox" wide>
      <Table caption="Deliveries per provider and state" head={['Provider', num('Waiting'), num('Processed'), num('Ignored'), num('Dead'), 'Oldest waiting']} empty="No delivery has come in yet.">
        {inbox.map((row) => (
          <tr>
            <td>
              <a href={`/admin/inbox?provider=${encodeURIComponent(row.provider)}`}>{row.provider}</a>
            </td>
            <td class="num">{row.received}</td>
            <td class="num">{row.processed}</td>
            <td class="num">{row.ignored}</td>
            <td class="num">{row.dead ? <a href={`/admin/inbox?provider=${encodeURIComponent(row.provider)}&state=dead`}>{row.dead}</a> : 0}</td>
            <td>{age(row.oldest_pending_seconds)}</td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}

function EndpointsCard({ endpoints }: { endpoints: Overview['endpoints'] }) {
  return (
    <Card title="Events out" id="endpoints" wide>
      <Table caption="Event endpoints and their oldest pending delivery" head={['Endpoint', 'State', 'Oldest pending']} empty="No event endpoint yet.">
        {endpoints.map((endpoint) => (
          <tr>
            <td class="wrap">
              <a href={`/admin/events/endpoints/${endpoint.id}`}>{endpoint.url}</a>
            </td>
            <td>
              <StateBadge state={endpoint.enabled ? 'enabled' : 'disabled'} />
            </td>
            <td>{age(endpoint.oldest_pending_seconds)}</td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}

const accountLink = (id: number | null, none: string) => (id === null ? <span class="muted">{none}</span> : <a href={`/admin/accounts/${id}`}>{`#${id}`}</a>);

function ActionsCard({ actions }: { actions: Overview['recent_actions'] }) {
  return (
    <Card title="Recent admin actions" id="actions" wide>
      <Table caption="The 10 latest changes by admins, newest first" head={['When', 'Admin', 'Action', 'Account']} empty="No admin has changed anything yet.">
        {actions.map((action) => (
          <tr>
            <td>
              <Time at={action.at} />
            </td>
            <td>{accountLink(action.admin_id, 'CLI or ADMIN_EMAILS')}</td>
            <td>
              <code>{action.type}</code>
            </td>
            <td>{accountLink(action.account_id, '–')}</td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}

export function OverviewPage({ operator, overview }: { operator: OperatorView; overview: Overview }) {
  const { accounts } = overview;
  return (
    <ConsoleLayout title="Overview" operator={operator} section="/admin">
      <Card title="Accounts" id="accounts">
        <div class="stats">
          <Stat label="Accounts" value={accounts.total} />
          <Stat label="Verified" value={accounts.verified} />
          <Stat label="With a second factor" value={accounts.mfa} />
          <Stat label="New in 7 days" value={accounts.new_7d} />
        </div>
        <p>
          <a href="/admin/accounts">Find an account</a>
        </p>
      </Card>
      <div class="grid">
        <LoginsCard logins={overview.logins} />
        <InboxCard inbox={overview.inbox} />
        <EndpointsCard endpoints={overview.endpoints} />
        <ActionsCard actions={overview.recent_actions} />
      </div>
    </ConsoleLayout>
  );
}
