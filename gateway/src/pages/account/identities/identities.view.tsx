import type { AccountData, AccountFormState } from '../account-types.ts';
import { Actions, Button, Card, Field, Form, Hidden, NoticeBox } from '../../kit/components.tsx';
import { StepUpField, StepUpPasskey, type StepUp } from '../../kit/second-factor.view.tsx';
import { formatInstant } from '../../kit/wording.ts';

type Props = { csrf: string; identities: AccountData['identities']; providers: AccountData['providers']; state?: AccountFormState; stepUp: StepUp };

/**
 * "Connected accounts": the identity providers that sign in to this account, each with a
 * form to disconnect it, a form to connect each of the others (both ask for the password
 * when the account has one, and the step-up: connecting is a new way in, started only by a
 * POST), and for an account without a password, a way to set one (a reset link by mail). Nothing when no provider is configured and none is connected.
 */
export function IdentitiesCard({ csrf, identities, providers, state, stepUp }: Props) {
  if (!identities || (!providers.length && !identities.identities.length)) return null;
  const linked = new Set(identities.identities.map((identity) => identity.provider));
  const unlinked = providers.filter((provider) => !linked.has(provider.name));
  return (
    <Card title="Connected accounts" id="connected">
      <p class="lead">Sign in with these as well as, or instead of, a password.</p>
      <NoticeBox notice={state?.notice} />
      {identities.identities.map((identity) => (
        <Form action="/account/identities/unlink" csrf={csrf}>
          <p>
            <strong>{identity.label}</strong> {identity.email && <span>({identity.email})</span>}, connected {formatInstant(identity.linked_at)}
          </p>
          <Hidden name="name" value={identity.provider} />
          {identities.has_password && (
            <Field name="password" label="Password" type="password" form={state?.target === identity.provider ? state.form : undefined} idPrefix={`unlink-${identity.provider}`} autoComplete="current-password" />
          )}
          <StepUpField stepUp={stepUp} form={state?.target === identity.provider ? state.form : undefined} idPrefix={`unlink-${identity.provider}`} />
          <Actions>
            <Button variant="secondary">Disconnect {identity.label}</Button>
            <StepUpPasskey stepUp={stepUp} />
          </Actions>
        </Form>
      ))}
      {unlinked.map((provider) => (
        <Form action={`/account/identities/${provider.name}/connect`} csrf={csrf}>
          <h3>Connect {provider.label}</h3>
          {identities.has_password && (
            <Field name="password" label="Password" type="password" form={state?.target === provider.name ? state.form : undefined} idPrefix={`connect-${provider.name}`} autoComplete="current-password" />
          )}
          <StepUpField stepUp={stepUp} form={state?.target === provider.name ? state.form : undefined} idPrefix={`connect-${provider.name}`} />
          <Actions>
            <Button variant="secondary">Connect {provider.label}</Button>
            <StepUpPasskey stepUp={stepUp} />
          </Actions>
        </Form>
      ))}
      {!identities.has_password && (
        <Form action="/account/password/set" csrf={csrf}>
          <h3>Set a password</h3>
          <p>Your account has no password: you sign in with a provider. We can e-mail you a link to set one.</p>
          <Button variant="secondary">E-mail me a link to set a password</Button>
        </Form>
      )}
    </Card>
  );
}
