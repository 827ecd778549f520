import type { AccountData, AccountForm, AccountFormState, MfaStage } from '../account-types.ts';
import { Actions, Alert, Button, Card, Field, Form, Hidden, NoticeBox } from '../../kit/components.tsx';
import { PasskeyArea, StepUpField, StepUpPasskey, type StepUp } from '../../kit/second-factor.view.tsx';
import { formatInstant } from '../../kit/wording.ts';
import { CurrentPasswordField } from '../current-password.view.tsx';

type Mfa = AccountData['mfa'];
type SectionProps = { csrf: string; mfa: Mfa; stepUp: StepUp; state: (name: AccountForm) => AccountFormState | undefined };

/** The second factor's forms post here; `#mfa` brings the reader back to this card, not to the top of the page. */
const action = (path: string) => `/account/mfa/${path}#mfa`;

/** What the account's forms need to ask for a proof: nothing while it has no second factor. */
export function stepUpOf(mfa: Mfa): StepUp {
  return mfa.totp || mfa.passkeys.length ? { totp: mfa.totp, passkeys: mfa.passkeys.length > 0 } : undefined;
}

function Status({ on }: { on: boolean }) {
  return on ? <span class="badge badge-good">On</span> : <span class="badge">Off</span>;
}

function TotpSection({ csrf, mfa, stepUp, state }: SectionProps) {
  const own = state('totp');
  return (
    <div class="mfa-section" id="mfa-totp">
      <h3>
        Authenticator app <Status on={mfa.totp} />
      </h3>
      <NoticeBox notice={own?.notice} />
      {mfa.totp ? (
        <>
          <p class="lead">Signing in asks for the 6-digit code the app shows.</p>
          <details class="more" open={own !== undefined}>
            <summary>Turn off the authenticator app</summary>
            <Form action={action('totp/disable')} csrf={csrf}>
              <CurrentPasswordField name="password" label="Password" type="password" form={own?.form} idPrefix="totp-off" autoComplete="current-password" />
              <StepUpField stepUp={stepUp} form={own?.form} idPrefix="totp-off" required passkey={false} />
              <Actions>
                <Button variant="danger">Turn off</Button>
              </Actions>
            </Form>
          </details>
        </>
      ) : (
        <>
          <p class="lead">An app on your phone (such as Google Authenticator, Microsoft Authenticator or 1Password) shows a new code every 30 seconds.</p>
          <Form action={action('totp/setup')} csrf={csrf}>
            <CurrentPasswordField name="password" label="Password" type="password" form={own?.form} idPrefix="totp-setup" autoComplete="current-password" />
            <StepUpField stepUp={stepUp} form={own?.form} idPrefix="totp-setup" />
            <Actions>
              <Button variant="secondary">Set up the authenticator app</Button>
              <StepUpPasskey stepUp={stepUp} />
            </Actions>
          </Form>
        </>
      )}
    </div>
  );
}

type Passkey = Mfa['passkeys'][number];

function PasskeyRow({ csrf, passkey, stepUp, state }: { csrf: string; passkey: Passkey; stepUp: StepUp; state?: AccountFormState }) {
  const used = passkey.last_used_at ? `last used ${formatInstant(passkey.last_used_at)}` : 'not used yet';
  const idPrefix = `passkey-${passkey.id}`;
  return (
    <li class="row-wrap">
      <div class="row-main">
        <div class="row-title">
          <span class="row-name">{passkey.name}</span>
        </div>
        <div class="row-meta">{`added ${formatInstant(passkey.created_at)} · ${used}`}</div>
      </div>
      <details class="more row-more" open={state !== undefined}>
        <summary>Remove</summary>
        <NoticeBox notice={state?.notice} />
        <Form action={action('passkeys/remove')} csrf={csrf}>
          <Hidden name="passkey_id" value={passkey.id} />
          <CurrentPasswordField name="password" label="Password" type="password" form={state?.form} idPrefix={idPrefix} autoComplete="current-password" />
          <StepUpField stepUp={stepUp} form={state?.form} idPrefix={idPrefix} />
          <Actions>
            <Button variant="danger" size="small">
              Remove this passkey
            </Button>
            <StepUpPasskey stepUp={stepUp} />
          </Actions>
        </Form>
      </details>
    </li>
  );
}

function PasskeysSection({ csrf, mfa, stepUp, state }: SectionProps) {
  const own = state('passkeys');
  const rowState = own?.target ? own : undefined;
  const addState = own && !own.target ? own : undefined;
  return (
    <div class="mfa-section" id="mfa-passkeys">
      <h3>
        Passkeys <Status on={mfa.passkeys.length > 0} />
      </h3>
      <p class="lead">Your fingerprint, face or screen lock: sign in with it alone, or use it as the second step.</p>
      {mfa.passkeys.length > 0 && (
        <ul class="rows" id="passkey-list">
          {mfa.passkeys.map((passkey) => (
            <PasskeyRow csrf={csrf} passkey={passkey} stepUp={stepUp} state={rowState?.target === passkey.id ? rowState : undefined} />
          ))}
        </ul>
      )}
      {rowState && !mfa.passkeys.some((passkey) => passkey.id === rowState.target) && <NoticeBox notice={rowState.notice} />}
      <NoticeBox notice={addState?.notice} />
      <details class="more" open={addState !== undefined}>
        <summary>Add a passkey</summary>
        <Form action={action('passkeys/options')} csrf={csrf}>
          <CurrentPasswordField name="password" label="Password" type="password" form={addState?.form} idPrefix="passkey-add" autoComplete="current-password" />
          <StepUpField stepUp={stepUp} form={addState?.form} idPrefix="passkey-add" />
          <Actions>
            <Button variant="secondary">Continue</Button>
            <StepUpPasskey stepUp={stepUp} />
          </Actions>
        </Form>
      </details>
    </div>
  );
}

/** Fewer than this many codes left: time to make new ones. */
const FEW_CODES = 3;

function RecoverySection({ csrf, mfa, stepUp, state }: SectionProps) {
  const own = state('recovery');
  const left = mfa.recovery_codes_left;
  return (
    <div class="mfa-section" id="mfa-recovery">
      <h3>Recovery codes</h3>
      <NoticeBox notice={own?.notice} />
      {left <= FEW_CODES && (
        <Alert tone="warning">
          <p>{left === 0 ? 'You have no recovery codes left.' : `Only ${left} recovery ${left === 1 ? 'code is' : 'codes are'} left.`} Make new ones before you run out.</p>
        </Alert>
      )}
      <p class="lead">
        {`${left} of 10 left. Each works once, in place of a code from your app, should you lose your phone or passkey.`}
      </p>
      <details class="more" open={own !== undefined}>
        <summary>Make new recovery codes</summary>
        <p class="hint">The codes you have now stop working.</p>
        <Form action={action('recovery-codes')} csrf={csrf}>
          <CurrentPasswordField name="password" label="Password" type="password" form={own?.form} idPrefix="recovery" autoComplete="current-password" />
          <StepUpField stepUp={stepUp} form={own?.form} idPrefix="recovery" required />
          <Actions>
            <Button variant="secondary">Make new recovery codes</Button>
            <StepUpPasskey stepUp={stepUp} />
          </Actions>
        </Form>
      </details>
    </div>
  );
}

/** "JBSW Y3DP …": a key typed by hand is read in groups of four. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, '$1 ');

function TotpSetup({ csrf, stage, state }: { csrf: string; stage: Extract<MfaStage, { kind: 'totp-setup' }>; state?: AccountFormState }) {
  return (
    <div class="mfa-stage" id="totp-setup">
      <h3>Scan this QR code with your authenticator app</h3>
      <div class="mfa-setup">
        {/* The SVG is made by the qrcode package from the otpauth:// URL, never from text a person typed. */}
        <div class="qr" role="img" aria-label="QR code of your new authenticator key" dangerouslySetInnerHTML={{ __html: stage.qrSvg }} />
        <div class="mfa-setup-steps">
          <p>Cannot scan it? Add an account in the app by hand, with this key (time-based, 6 digits):</p>
          <code class="secret" id="totp-secret">
            {grouped(stage.secret)}
          </code>
          <NoticeBox notice={state?.notice} />
          <Form action={action('totp/enable')} csrf={csrf}>
            <Hidden name="otpauth_url" value={stage.otpauthUrl} />
            <Field
              name="code"
              label="Code from your authenticator app"
              form={state?.form}
              idPrefix="totp-enable"
              autoComplete="one-time-code"
              inputMode="numeric"
              hint="The 6 digits the app shows for Gatehouse now."
            />
            <Actions>
              <Button>Turn on</Button>
              <a href="/account">Cancel</a>
            </Actions>
          </Form>
        </div>
      </div>
    </div>
  );
}

/** The codes as a text file the browser saves: a data: link needs no script and no request. */
function downloadHref(email: string, codes: string[]): string {
  const text = [`Gatehouse recovery codes for ${email}`, '', ...codes, '', 'Each code works once, in place of a code from your authenticator app or a passkey.', ''].join('\n');
  return `data:text/plain;charset=utf-8,${encodeURIComponent(text)}`;
}

function RecoveryCodes({ email, stage }: { email: string; stage: Extract<MfaStage, { kind: 'recovery-codes' }> }) {
  const { codes } = stage;
  return (
    <div class="mfa-stage" id="recovery-codes">
      <Alert tone="success">
        <p>{stage.done}</p>
      </Alert>
      <Alert tone="warning" title="Save your recovery codes now">
        <p>This is the only time they are shown. Each works once, in place of a code from your app, should you lose your phone or passkey. Keep them somewhere safe, apart from this device.</p>
      </Alert>
      <ol class="codes">
        {codes.map((code) => (
          <li>
            <code>{code}</code>
          </li>
        ))}
      </ol>
      <Actions>
        <a class="button" download="gatehouse-recovery-codes.txt" href={downloadHref(email, codes)}>
          Download
        </a>
        <a class="button button-secondary" href="/account">
          I have saved them
        </a>
      </Actions>
    </div>
  );
}

function PasskeyFinish({ csrf, stage, state }: { csrf: string; stage: Extract<MfaStage, { kind: 'passkey-finish' }>; state?: AccountFormState }) {
  return (
    <div class="mfa-stage" id="passkey-finish">
      <h3>Create the passkey</h3>
      <p class="lead">Your browser asks you to confirm with your fingerprint, face, screen lock or security key. This works for the next 5 minutes.</p>
      <NoticeBox notice={state?.notice} />
      <Form action={action('passkeys')} csrf={csrf} options={stage.options}>
        <Field name="name" label="Name of the passkey (optional)" form={state?.form} idPrefix="passkey-new" autoComplete="off" required={false} maxLength={100} hint="To tell your passkeys apart, such as “Work laptop”." />
        <Hidden name="response" value="" />
        <noscript>
          <p class="field-error">Making a passkey needs JavaScript, which is off in this browser.</p>
        </noscript>
        <PasskeyArea kind="register" label="Create passkey" look="primary" />
        <p class="hint">
          <a href="/account">Cancel</a>
        </p>
      </Form>
    </div>
  );
}

function Stage({ csrf, email, stage, state }: { csrf: string; email: string; stage: MfaStage; state: (name: AccountForm) => AccountFormState | undefined }) {
  if (stage.kind === 'totp-setup') return <TotpSetup csrf={csrf} stage={stage} state={state('totp')} />;
  if (stage.kind === 'passkey-finish') return <PasskeyFinish csrf={csrf} stage={stage} state={state('passkeys')} />;
  return <RecoveryCodes email={email} stage={stage} />;
}

type MfaCardProps = { csrf: string; email: string; mfa: Mfa; stage?: MfaStage; state: (name: AccountForm) => AccountFormState | undefined };

/**
 * Two-factor authentication: the authenticator app, passkeys and recovery codes, each with
 * its forms. While a factor is being set up, that step takes the card's place; the codes a
 * new factor comes with are shown once, above the rest.
 */
export function MfaCard({ csrf, email, mfa, stage, state }: MfaCardProps) {
  const stepUp = stepUpOf(mfa);
  const sections = { csrf, mfa, stepUp, state };
  return (
    <Card title="Two-factor authentication" id="mfa" wide>
      <p class="lead">A second step when you sign in, so that your password alone does not open your account.</p>
      {stage && stage.kind !== 'recovery-codes' ? (
        <Stage csrf={csrf} email={email} stage={stage} state={state} />
      ) : (
        <>
          {stage && <Stage csrf={csrf} email={email} stage={stage} state={state} />}
          <div class="mfa-sections">
            <TotpSection {...sections} />
            <PasskeysSection {...sections} />
            {stepUp && <RecoverySection {...sections} />}
          </div>
        </>
      )}
    </Card>
  );
}
