import type { ComponentChildren } from 'preact';
import { Field, Hidden, type FormState } from './components.tsx';

/** What a form needs to know of the account's second factor to ask for a proof; undefined when it has none. */
export type StepUp = { totp: boolean; passkeys: boolean } | undefined;

export const CODE_LABEL = 'Code from your authenticator app (or a recovery code)';

/** The label of a code field on an account with these factors: without an app, only a recovery code can be typed. */
const codeLabel = (stepUp: NonNullable<StepUp>) => (stepUp.totp ? CODE_LABEL : 'Recovery code');

const LOOKS = {
  primary: 'button button-block',
  secondary: 'button button-secondary button-block',
  inline: 'button button-secondary',
};

type PasskeyAreaProps = { kind: 'authenticate' | 'register'; label: string; look?: keyof typeof LOOKS; children?: ComponentChildren };

/**
 * A passkey button and where its failure is said, shown only where the script runs and the
 * browser can use passkeys (the script unhides them): without JavaScript nothing broken shows.
 * The button fills the form's hidden `response` field and sends the form.
 */
export function PasskeyArea({ kind, label, look = 'inline', children }: PasskeyAreaProps) {
  return (
    <div class="passkey-area" data-passkey-area hidden>
      {children}
      <button type="button" class={LOOKS[look]} data-passkey={kind}>
        {label}
      </button>
      <p class="field-error" data-passkey-status role="alert" hidden />
    </div>
  );
}

type StepUpFieldProps = {
  stepUp: StepUp;
  form?: FormState;
  idPrefix: string;
  /** The code is the proof this form needs, not an optional step-up (recovery codes, turning the app off). */
  required?: boolean;
  /** Whether a passkey may stand in for the code (every form but turning the app off). */
  passkey?: boolean;
};

/**
 * The proof a sensitive change asks of an account with a second factor: a code, or a passkey
 * (its answer in the hidden `response` field, see StepUpPasskey). As a step-up it is optional:
 * one proof serves the session for five minutes, and the server says when one is needed.
 */
export function StepUpField({ stepUp, form, idPrefix, required = false, passkey = true }: StepUpFieldProps) {
  if (!stepUp) return null;
  const withPasskey = passkey && stepUp.passkeys;
  return (
    <>
      <Field
        name="code"
        label={codeLabel(stepUp)}
        form={form}
        idPrefix={idPrefix}
        autoComplete="one-time-code"
        required={required && !withPasskey}
        hint={required ? undefined : 'Asked for once every 5 minutes.'}
      />
      {withPasskey && <Hidden name="response" value="" />}
    </>
  );
}

/** Beside a form's own button: confirm the change with a passkey instead of a code (and send it). */
export function StepUpPasskey({ stepUp }: { stepUp: StepUp }) {
  if (!stepUp?.passkeys) return null;
  return <PasskeyArea kind="authenticate" label="Confirm with a passkey" look="inline" />;
}
