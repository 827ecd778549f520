import { Alert, Button, Field, Form, Hidden, NoticeBox, type FormPageProps } from '../kit/components.tsx';
import { Layout } from '../kit/layout.tsx';
import { ProviderLinks } from '../kit/provider-links.view.tsx';
import { PasskeyArea } from '../kit/second-factor.view.tsx';

// The sign-in page (address and password, a passkey, providers) and the forgotten password's form.

type LoginProps = FormPageProps & { next?: string; unverifiedEmail?: string };

/** When the password was right but the address is not confirmed: a way to get a new link. */
function ResendOffer({ csrf, email }: { csrf: string; email: string }) {
  return (
    <Alert tone="warning" title="Confirm your e-mail address first">
      <p>We sent a link to {email} when you registered. Open it, then sign in again. No mail? We can send a new link.</p>
      <Form action="/resend-verification" csrf={csrf}>
        <Hidden name="email" value={email} />
        <Button variant="secondary" size="small">
          Send a new link
        </Button>
      </Form>
    </Alert>
  );
}

/**
 * A passkey instead of the address and password: the script asks for sign-in options, the
 * browser signs them, and this form posts the answer. Hidden where there is no script.
 */
function PasskeySignIn({ csrf, next }: { csrf: string; next?: string }) {
  return (
    <Form action="/login/passkey" csrf={csrf}>
      {next && <Hidden name="next" value={next} />}
      <Hidden name="response" value="" />
      <PasskeyArea kind="authenticate" label="Sign in with a passkey" look="secondary">
        <p class="divider">
          <span>or</span>
        </p>
      </PasskeyArea>
    </Form>
  );
}

export function LoginPage({ csrf, form, notice, next, unverifiedEmail, providers }: LoginProps) {
  return (
    <Layout title="Sign in" script>
      <div class="card">
        <h1>Sign in</h1>
        <p class="lead">to your Gatehouse account.</p>
        <NoticeBox notice={notice} />
        {unverifiedEmail && <ResendOffer csrf={csrf} email={unverifiedEmail} />}
        <Form action="/login" csrf={csrf}>
          {next && <Hidden name="next" value={next} />}
          <Field name="email" label="E-mail address" type="email" form={form} autoComplete="username" />
          <Field name="password" label="Password" type="password" form={form} autoComplete="current-password" />
          <Button block>Sign in</Button>
        </Form>
        <PasskeySignIn csrf={csrf} next={next} />
        <ProviderLinks providers={providers} />
      </div>
      <div class="aside">
        <p>
          <a href="/forgot-password">Forgot your password?</a>
        </p>
        <p>
          New here? <a href="/register">Create an account</a>
        </p>
      </div>
    </Layout>
  );
}

export function ForgotPasswordPage({ csrf, form, notice }: FormPageProps) {
  return (
    <Layout title="Reset your password">
      <div class="card">
        <h1>Reset your password</h1>
        <p class="lead">Enter the address of your account and we will e-mail you a link to choose a new password.</p>
        <NoticeBox notice={notice} />
        <Form action="/forgot-password" csrf={csrf}>
          <Field name="email" label="E-mail address" type="email" form={form} autoComplete="email" />
          <Button block>Send the link</Button>
        </Form>
      </div>
      <div class="aside">
        <p>
          Remembered it? <a href="/login">Sign in</a>
        </p>
      </div>
    </Layout>
  );
}
