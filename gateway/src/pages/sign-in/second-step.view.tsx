import { Button, Field, Form, Hidden, NoticeBox, type FormState, type Notice } from '../kit/components.tsx';
import { Layout } from '../kit/layout.tsx';
import { PasskeyArea } from '../kit/second-factor.view.tsx';

export type SecondStepMethod = 'totp' | 'passkey' | 'recovery_code';

type SecondStepProps = {
  csrf: string;
  methods: SecondStepMethod[];
  next?: string;
  /** Request options for the account's passkeys (JSON), when it has any. */
  passkeyOptions?: string;
  /** A recovery code in place of the app's code: another keyboard, another label. */
  recovery: boolean;
  form?: FormState;
  notice?: Notice;
};

export const TOTP_CODE_LABEL = 'Code from your authenticator app';
export const RECOVERY_CODE_LABEL = 'Recovery code';

/** Where the link to the other kind of code goes, `next` kept. */
function variantHref(recovery: boolean, next?: string): string {
  const query = new URLSearchParams(recovery ? { use: 'recovery' } : {});
  if (next) query.set('next', next);
  const text = query.toString();
  return text ? `/login/mfa?${text}` : '/login/mfa';
}

function PasskeyStep({ csrf, next, options }: { csrf: string; next?: string; options: string }) {
  return (
    <Form action="/login/mfa" csrf={csrf} options={options}>
      {next && <Hidden name="next" value={next} />}
      <Hidden name="response" value="" />
      <PasskeyArea kind="authenticate" label="Use a passkey" look="primary">
        <p class="lead">Confirm with the passkey on this device or your security key.</p>
      </PasskeyArea>
      <div data-passkey-area hidden>
        <p class="divider divider-after">
          <span>or</span>
        </p>
      </div>
    </Form>
  );
}

/**
 * The second step of a sign-in whose password was right: a code from the app (or a recovery
 * code), or a passkey. The sign-in it finishes is in an HttpOnly cookie, never in this page.
 */
export function SecondStepPage({ csrf, methods, next, passkeyOptions, recovery, form, notice }: SecondStepProps) {
  const totp = methods.includes('totp');
  const byApp = totp && !recovery;
  return (
    <Layout title="Two-step sign-in" script={passkeyOptions !== undefined}>
      <div class="card">
        <h1>One more step</h1>
        <p class="lead">Your password is right. Now confirm it is you with your second factor.</p>
        <NoticeBox notice={notice} />
        {passkeyOptions !== undefined && <PasskeyStep csrf={csrf} next={next} options={passkeyOptions} />}
        <Form action="/login/mfa" csrf={csrf}>
          {next && <Hidden name="next" value={next} />}
          {recovery && <Hidden name="use" value="recovery" />}
          {byApp ? (
            <Field
              name="code"
              label={TOTP_CODE_LABEL}
              form={form}
              autoComplete="one-time-code"
              inputMode="numeric"
              hint="The 6 digits the app shows for Gatehouse. A recovery code works here too."
            />
          ) : (
            <Field name="code" label={RECOVERY_CODE_LABEL} form={form} autoComplete="off" hint="One of the codes you saved when you turned on two-factor authentication. Each works once." />
          )}
          <Button block variant={passkeyOptions === undefined ? 'primary' : 'secondary'}>
            Continue
          </Button>
        </Form>
      </div>
      <div class="aside">
        {totp && (
          <p>
            {byApp ? <a href={variantHref(true, next)}>No phone at hand? Use a recovery code</a> : <a href={variantHref(false, next)}>Use your authenticator app</a>}
          </p>
        )}
        <p>
          <a href="/login">Start over</a>
        </p>
      </div>
    </Layout>
  );
}
