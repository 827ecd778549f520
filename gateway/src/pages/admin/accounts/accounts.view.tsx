import { Actions, Button, Card, Field, type Notice } from '../../kit/components.tsx';
import { eventLabel } from '../../kit/wording.ts';
import type { AdminOutputs } from '../console/console.tsx';
import { ActionForm, ConsoleLayout, Pager, Table, Time, UserAgent, type OperatorView } from '../console/console.view.tsx';

type Search = AdminOutputs['searchAccounts'];
type Details = AdminOutputs['account'];

const yesNo = (value: boolean) => (value ? <span class="badge badge-good">yes</span> : <span class="badge">no</span>);

export function AccountsPage({ operator, q, paged, search }: { operator: OperatorView; q: string; paged: boolean; search: Search }) {
  return (
    <ConsoleLayout title="Accounts" operator={operator} section="/admin/accounts">
      <Card>
        <form method="get" action="/admin/accounts" class="filters" role="search">
          <Field name="q" label="E-mail, its start, or an account id" form={{ values: { q } }} autoComplete="off" required={false} />
          <Actions>
            <Button>Search</Button>
            {q && (
              <a class="button button-secondary" href="/admin/accounts">
                Show all
              </a>
            )}
          </Actions>
        </form>
      </Card>
      <Card>
        <Table
          caption={q ? 'Accounts matching the search, newest first' : 'Every account, newest first'}
          head={['E-mail', 'Name', 'Plan', 'Role', 'Verified', 'Second factor', 'Created']}
          empty={q ? 'No account matches that search.' : 'There are no accounts yet.'}
        >
          {search.items.map((account) => (
            <tr>
              <td class="wrap">
                <a href={`/admin/accounts/${account.id}`}>{account.email}</a>
              </td>
              <td class="wrap">{account.name}</td>
              <td>{account.plan}</td>
              <td>{account.role === 'admin' ? <span class="badge badge-accent">admin</span> : 'user'}</td>
              <td>{yesNo(account.email_verified)}</td>
              <td>{yesNo(account.mfa)}</td>
              <td>
                <Time at={account.created_at} />
              </td>
            </tr>
          ))}
        </Table>
        <Pager path="/admin/accounts" query={{ q }} nextCursor={search.next_cursor} paged={paged} />
      </Card>
    </ConsoleLayout>
  );
}

function ActionsCard({ operator, details }: { operator: OperatorView; details: Details }) {
  const { account } = details;
  const base = `/admin/accounts/${account.id}`;
  return (
    <Card title="Actions" id="account-actions">
      <div class="action-list">
        <section>
          <h3>Sign out everywhere</h3>
          <p class="lead">Ends every session and voids pending e-mail-change and reset links. The owner is mailed.</p>
          <ActionForm action={`${base}/revoke-sessions`} operator={operator} label="Sign out everywhere" />
        </section>
        <section>
          <h3>Reset the second factor</h3>
          <p class="lead">{account.mfa ? 'Turns off the authenticator app, passkeys and recovery codes, after a confirmation. The owner is mailed.' : 'No second factor to reset.'}</p>
          {account.mfa && (
            <a class="button button-danger button-small" href={`${base}/reset-mfa`}>
              Reset the second factor
            </a>
          )}
        </section>
        <section>
          <h3>Role</h3>
          <p class="lead">{account.role === 'admin' ? 'An admin. The last admin cannot be made a user.' : 'A user. An admin can use this console.'}</p>
          <ActionForm
            action={`${base}/role`}
            operator={operator}
            fields={{ role: account.role === 'admin' ? 'user' : 'admin' }}
            label={account.role === 'admin' ? 'Make user' : 'Make admin'}
          />
        </section>
        {!account.email_verified && (
          <section>
            <h3>Verification</h3>
            <p class="lead">The address is not confirmed yet.</p>
            <ActionForm action={`${base}/resend-verification`} operator={operator} label="Resend the verification link" />
          </section>
        )}
      </div>
    </Card>
  );
}

export function AccountPage({ operator, details, notice }: { operator: OperatorView; details: Details; notice?: Notice }) {
  const { account, identities, sessions, activity } = details;
  return (
    <ConsoleLayout title={`Account #${account.id}`} operator={operator} section="/admin/accounts" notice={notice} actions path={`/admin/accounts/${account.id}`}>
      <p>
        <a href="/admin/accounts">All accounts</a>
      </p>
      <div class="grid">
        <Card title="Account" id="account">
          <dl class="details">
            <dt>E-mail</dt>
            <dd>
              {account.email} {account.email_verified ? <span class="badge badge-good">Verified</span> : <span class="badge">Not verified</span>}
            </dd>
            <dt>Name</dt>
            <dd>{account.name}</dd>
            <dt>Company</dt>
            <dd>{account.company ?? <span class="muted">–</span>}</dd>
            <dt>Plan</dt>
            <dd>{account.plan}</dd>
            <dt>Role</dt>
            <dd>{account.role}</dd>
            <dt>Second factor</dt>
            <dd>{account.mfa ? 'On' : 'Off'}</dd>
            <dt>Created</dt>
            <dd>
              <Time at={account.created_at} />
            </dd>
          </dl>
        </Card>
        <ActionsCard operator={operator} details={details} />
        <Card title="Identities" id="identities" wide>
          <Table caption="Identity providers that sign this account in" head={['Provider', 'Subject', 'E-mail', 'Linked']} empty="No identity provider is linked.">
            {identities.map((identity) => (
              <tr>
                <td>{identity.provider}</td>
                <td class="wrap">{identity.subject}</td>
                <td class="wrap">{identity.email ?? '–'}</td>
                <td>
                  <Time at={identity.linked_at} />
                </td>
              </tr>
            ))}
          </Table>
        </Card>
        <Card title="Sessions" id="sessions" wide>
          <Table caption="Live sessions, newest first" head={['Device', 'Via', 'Address', 'Signed in', 'Last seen']} empty="No live session.">
            {sessions.map((session) => (
              <tr>
                <td>
                  <UserAgent value={session.user_agent} />
                </td>
                <td>{session.via}</td>
                <td>{session.ip ?? '–'}</td>
                <td>
                  <Time at={session.created_at} />
                </td>
                <td>
                  <Time at={session.last_used_at} empty="not yet" />
                </td>
              </tr>
            ))}
          </Table>
        </Card>
        <Card title="Recent activity" id="activity" wide>
          <Table caption="The latest 20 events, newest first" head={['When', 'Event', 'Address', 'Device']} empty="No activity recorded.">
            {activity.map((item) => (
              <tr>
                <td>
                  <Time at={item.at} />
                </td>
                <td>{eventLabel(item.event)}</td>
                <td>{item.ip ?? '–'}</td>
                <td>
                  <UserAgent value={item.user_agent} />
                </td>
              </tr>
            ))}
          </Table>
          <p>
            <a href={`/admin/audit?account_id=${account.id}`}>All of this account's activity</a>
          </p>
        </Card>
      </div>
    </ConsoleLayout>
  );
}
