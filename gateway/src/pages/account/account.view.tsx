import { MfaCard, stepUpOf } from './mfa/mfa.view.tsx';
import { IdentitiesCard } from './identities/identities.view.tsx';
import { HasPassword } from './current-password.view.tsx';
import { ActivityCard, DeleteAccountCard, EmailCard, PasswordCard, SessionsCard } from './account-sections.view.tsx';
import type { AccountData, AccountForm, AccountFormState, AccountPageProps } from './account-types.ts';
import { Actions, Alert, Button, Card, Field, Form, NoticeBox, SelectField } from '../kit/components.tsx';
import { Layout } from '../kit/layout.tsx';
import { StepUpField, StepUpPasskey, type StepUp } from '../kit/second-factor.view.tsx';
import { formatInstant } from '../kit/wording.ts';

/** The card's own state, if it is the one that was refused. */
function stateOf(refused: AccountFormState | undefined, name: AccountForm): AccountFormState | undefined {
  return refused?.name === name ? refused : undefined;
}

/** The name and company as they are, or as they were typed when the change was refused. */
const profileValues = (user: AccountData['user'], state?: AccountFormState) => state?.form ?? { values: { name: user.name, company: user.company ?? '' } };

function ProfileCard({ csrf, user, state }: { csrf: string; user: AccountData['user']; state?: AccountFormState }) {
  const form = profileValues(user, state);
  return (
    <Card title="Profile" id="profile">
      <NoticeBox notice={state?.notice} />
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
        <dd>
          {user.role}
          {user.role === 'admin' && (
            <>
              {' · '}
              <a href="/admin">Open the operator console</a>
            </>
          )}
        </dd>
        <dt>Member since</dt>
        <dd>
          <time dateTime={user.created_at}>{formatInstant(user.created_at)}</time>
        </dd>
      </dl>
      <Form action="/account/profile" csrf={csrf}>
        <Field name="name" label="Name" form={form} idPrefix="profile" autoComplete="name" hint="1 to 100 characters." />
        <Field name="company" label="Company" form={form} idPrefix="profile" autoComplete="organization" required={false} hint="Optional, up to 200 characters; leave it empty to remove it." />
        <Actions>
          <Button variant="secondary">Save name and company</Button>
        </Actions>
      </Form>
    </Card>
  );
}

const GRACE_OPTIONS = [
  { value: '0', label: 'Stop the current key at once' },
  { value: '3600', label: 'Keep the current key working for 1 hour' },
  { value: '86400', label: 'Keep the current key working for 24 hours' },
];

function ApiKeyCard({ csrf, apiKey, state, stepUp }: { csrf: string; apiKey?: string; state?: AccountFormState; stepUp: StepUp }) {
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
        <StepUpField stepUp={stepUp} form={state?.form} idPrefix="rotate" />
        <Actions>
          <Button variant="secondary">Rotate key</Button>
          <StepUpPasskey stepUp={stepUp} />
        </Actions>
      </Form>
    </Card>
  );
}

/**
 * The passkey script is loaded where a passkey button can show: a passkey being made, or an
 * account with passkeys (any of them confirms a change). Other account pages run no script.
 */
const needsScript = ({ data, mfaStage }: AccountPageProps) => mfaStage?.kind === 'passkey-finish' || data.mfa.passkeys.length > 0;

export function AccountPage(props: AccountPageProps) {
  const { csrf, data, notice, apiKey, refused, mfaStage } = props;
  const { user } = data;
  const stepUp = stepUpOf(data.mfa);
  const state = (name: AccountForm) => stateOf(refused, name);
  return (
    <Layout title="Your account" viewer={{ email: user.email, csrf }} wide script={needsScript(props)}>
      <div class="page-head">
        <h1>Your account</h1>
        <p class="lead">Signed in as {user.name}.</p>
      </div>
      <NoticeBox notice={notice} />
      {data.mfaSetupRequired && (
        <Alert tone="warning" title="Turn on two-factor authentication">
          <p>Accounts with your role need a second factor. Set up an authenticator app or add a passkey below; until then the rest of your account stays closed.</p>
        </Alert>
      )}
      <HasPassword.Provider value={data.identities?.has_password !== false}>
        <div class="grid">
          <ProfileCard csrf={csrf} user={user} state={state('profile')} />
          <ApiKeyCard csrf={csrf} apiKey={apiKey} state={state('key')} stepUp={stepUp} />
          <PasswordCard csrf={csrf} state={state('password')} stepUp={stepUp} />
          <EmailCard csrf={csrf} state={state('email')} pending={data.pendingEmail} stepUp={stepUp} />
          <MfaCard csrf={csrf} email={user.email} mfa={data.mfa} stage={mfaStage} state={state} />
          <IdentitiesCard csrf={csrf} identities={data.identities} providers={data.providers} state={state('identities')} stepUp={stepUp} />
          <SessionsCard csrf={csrf} sessions={data.sessions} state={state('sessions')} />
          <ActivityCard items={data.activity} />
          <DeleteAccountCard csrf={csrf} state={state('delete')} stepUp={stepUp} />
        </div>
      </HasPassword.Provider>
    </Layout>
  );
}
