import type { AccountData, AccountFormState } from './account-types.ts';
import { Actions, Button, Card, Field, Form, Hidden, NoticeBox } from '../kit/components.tsx';
import { StepUpField, StepUpPasskey, type StepUp } from '../kit/second-factor.view.tsx';
import { deviceName, eventLabel, formatInstant } from '../kit/wording.ts';
import { CurrentPasswordField } from './current-password.view.tsx';

type CardProps = { csrf: string; state?: AccountFormState };
/** A card whose change needs a proof of the second factor, when the account has one. */
type GuardedCardProps = CardProps & { stepUp: StepUp };

export function PasswordCard({ csrf, state, stepUp }: GuardedCardProps) {
  return (
    <Card title="Password" id="password">
      <p class="lead">Changing it signs out every other device.</p>
      <NoticeBox notice={state?.notice} />
      <Form action="/account/password" csrf={csrf}>
        <CurrentPasswordField name="current_password" label="Current password" type="password" form={state?.form} idPrefix="password" autoComplete="current-password" />
        <Field name="new_password" label="New password" type="password" form={state?.form} idPrefix="password" autoComplete="new-password" minLength={8} hint="8 to 128 characters." />
        <StepUpField stepUp={stepUp} form={state?.form} idPrefix="password" />
        <Actions>
          <Button>Change password</Button>
          <StepUpPasskey stepUp={stepUp} />
        </Actions>
      </Form>
    </Card>
  );
}

function PendingEmailChange({ csrf, pending }: { csrf: string; pending: NonNullable<AccountData['pendingEmail']> }) {
  return (
    <div class="pending" id="pending-email">
      <p>
        A change to <strong>{pending.new_email}</strong> is waiting for its confirmation link (asked for {formatInstant(pending.requested_at)}; the link
        works until {formatInstant(pending.expires_at)}). If you did not ask for it, cancel it and change your password.
      </p>
      <Form action="/account/email/cancel" csrf={csrf}>
        <Button variant="secondary" size="small">
          Cancel the change
        </Button>
      </Form>
    </div>
  );
}

export function EmailCard({ csrf, state, pending, stepUp }: GuardedCardProps & { pending: AccountData['pendingEmail'] }) {
  return (
    <Card title="E-mail address" id="email">
      <p class="lead">We send a link to the new address; your address changes once you open it.</p>
      <NoticeBox notice={state?.notice} />
      {pending && <PendingEmailChange csrf={csrf} pending={pending} />}
      <Form action="/account/email" csrf={csrf}>
        <Field name="new_email" label="New e-mail address" type="email" form={state?.form} idPrefix="email" autoComplete="email" />
        <CurrentPasswordField name="password" label="Password" type="password" form={state?.form} idPrefix="email" autoComplete="current-password" />
        <StepUpField stepUp={stepUp} form={state?.form} idPrefix="email" />
        <Actions>
          <Button>Change e-mail address</Button>
          <StepUpPasskey stepUp={stepUp} />
        </Actions>
      </Form>
    </Card>
  );
}

type Session = AccountData['sessions'][number];

function SessionRow({ csrf, session }: { csrf: string; session: Session }) {
  const used = session.last_used_at ? ` · last used ${formatInstant(session.last_used_at)}` : '';
  return (
    <li>
      <div class="row-main">
        <div class="row-title">
          <span class="row-name" title={session.user_agent ?? undefined}>
            {deviceName(session.user_agent)}
          </span>
          {session.current && <span class="badge badge-good">This device</span>}
        </div>
        <div class="row-meta">
          {`${session.ip ?? 'unknown address'} · signed in ${formatInstant(session.created_at)}${used}`}
        </div>
      </div>
      {!session.current && (
        <Form action="/account/sessions/revoke" csrf={csrf}>
          <Hidden name="session_id" value={session.id} />
          <Button variant="secondary" size="small">
            Sign out
          </Button>
        </Form>
      )}
    </li>
  );
}

export function SessionsCard({ csrf, sessions, state }: CardProps & { sessions: Session[] }) {
  const others = sessions.filter((session) => !session.current).length;
  return (
    <Card title="Sessions" id="sessions" wide>
      <p class="lead">Where your account is signed in, newest first.</p>
      <NoticeBox notice={state?.notice} />
      <ul class="rows">
        {sessions.map((session) => (
          <SessionRow csrf={csrf} session={session} />
        ))}
      </ul>
      {others > 0 && (
        <Form action="/account/sessions/revoke-others" csrf={csrf}>
          <Button variant="secondary">Sign out everywhere else</Button>
        </Form>
      )}
    </Card>
  );
}

/** The latest events are what the owner looks for; the procedure gives up to 100. */
const ACTIVITY_SHOWN = 20;

export function ActivityCard({ items }: { items: AccountData['activity'] }) {
  return (
    <Card title="Recent activity" id="activity" wide>
      {items.length === 0 ? (
        <p class="empty">Nothing yet.</p>
      ) : (
        <ul class="rows">
          {items.slice(0, ACTIVITY_SHOWN).map((item) => (
            <li>
              <div class="row-main">
                <div class="row-title">{eventLabel(item.event)}</div>
                <div class="row-meta">
                  <time dateTime={item.at}>{formatInstant(item.at)}</time>
                  {item.ip ? ` · ${item.ip}` : ''}
                </div>
              </div>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

export function DeleteAccountCard({ csrf, state, stepUp }: GuardedCardProps) {
  return (
    <Card title="Delete account" id="delete" danger wide>
      <p class="lead">This removes your account, its API key, sites, channels and messages at once. It cannot be undone.</p>
      <NoticeBox notice={state?.notice} />
      <Form action="/account/delete" csrf={csrf}>
        <CurrentPasswordField name="password" label="Password" type="password" form={state?.form} idPrefix="delete" autoComplete="current-password" />
        <StepUpField stepUp={stepUp} form={state?.form} idPrefix="delete" />
        <Actions>
          <Button variant="danger">Delete my account</Button>
          <StepUpPasskey stepUp={stepUp} />
        </Actions>
      </Form>
    </Card>
  );
}
