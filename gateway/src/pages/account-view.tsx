import { ActivityCard, DeleteAccountCard, EmailCard, PasswordCard, SessionsCard } from './account-sections.tsx';
import type { AccountData, AccountForm, AccountFormState, AccountPageProps } from './account-types.ts';
import { Actions, Button, Card, Form, NoticeBox, SelectField } from './components.tsx';
import { Layout } from './layout.tsx';
import { formatInstant } from './wording.ts';

/** The card's own state, if it is the one that was refused. */
function stateOf(refused: AccountFormState | undefined, name: AccountForm): AccountFormState | undefined {
  return refused?.name === name ? refused : undefined;
}

function ProfileCard({ user }: { user: AccountData['user'] }) {
  return (
    <Card title="Profile" id="profile">
      <dl class="details">
        <dt>Name</dt>
        <dd>{user.name}</dd>
        <dt>E-mail</dt>
        <dd>
          {user.email}{' '}
          {user.email_verified ? <span class="badge badge-good">Verified</span> : <span class="badge">Not verified</span>}
        </dd>
        {user.company && (
          <>
            <dt>Company</dt>
            <dd>{user.company}</dd>
          </>
        )}
        <dt>Plan</dt>
        <dd>
          <span class="badge badge-accent">{user.plan}</span>
        </dd>
        <dt>Role</dt>
        <dd>{user.role}</dd>
        <dt>Member since</dt>
        <dd>
          <time dateTime={user.created_at}>{formatInstant(user.created_at)}</time>
        </dd>
      </dl>
    </Card>
  );
}

const GRACE_OPTIONS = [
  { value: '0', label: 'Stop the current key at once' },
  { value: '3600', label: 'Keep the current key working for 1 hour' },
  { value: '86400', label: 'Keep the current key working for 24 hours' },
];

function ApiKeyCard({ csrf, apiKey, state }: { csrf: string; apiKey?: string; state?: AccountFormState }) {
  return (
    <Card title="API key" id="api-key">
      <p class="lead">
        Your servers send it as <code>Authorization: Bearer …</code>. Anyone who has it can act as you.
      </p>
      <NoticeBox notice={state?.notice} />
      {apiKey ? (
        <code class="secret" id="api-key-value">
          {apiKey}
        </code>
      ) : (
        <>
          <code class="secret secret-hidden" aria-label="hidden">
            ••••••••••••••••••••••••••••••••
          </code>
          <Form action="/account/api-key" csrf={csrf}>
            <Button variant="secondary">Show API key</Button>
          </Form>
        </>
      )}
      <Form action="/account/api-key/rotate" csrf={csrf}>
        <SelectField name="grace_seconds" label="When you rotate, the current key" options={GRACE_OPTIONS} idPrefix="rotate" />
        <Actions>
          <Button variant="secondary">Rotate key</Button>
        </Actions>
      </Form>
    </Card>
  );
}

export function AccountPage({ csrf, data, notice, apiKey, refused }: AccountPageProps) {
  const { user } = data;
  return (
    <Layout title="Your account" viewer={{ email: user.email, csrf }} wide>
      <div class="page-head">
        <h1>Your account</h1>
        <p class="lead">Signed in as {user.name}.</p>
      </div>
      <NoticeBox notice={notice} />
      <div class="grid">
        <ProfileCard user={user} />
        <ApiKeyCard csrf={csrf} apiKey={apiKey} state={stateOf(refused, 'key')} />
        <PasswordCard csrf={csrf} state={stateOf(refused, 'password')} />
        <EmailCard csrf={csrf} state={stateOf(refused, 'email')} pending={data.pendingEmail} />
        <SessionsCard csrf={csrf} sessions={data.sessions} state={stateOf(refused, 'sessions')} />
        <ActivityCard items={data.activity} />
        <DeleteAccountCard csrf={csrf} state={stateOf(refused, 'delete')} />
      </div>
    </Layout>
  );
}
