import { Actions, Alert, Button, Field, Form, Hidden, NoticeBox, type FormState, type Notice } from './components.tsx';
import { Layout } from './layout.tsx';
import { PasskeyArea } from './second-factor.tsx';
import { ProviderLinks, type ProviderLink } from './provider-links.tsx';

type FormPageProps = { csrf: string; form?: FormState; notice?: Notice; providers?: ProviderLink[] };

export function RegisterPage({ csrf, form, notice, providers }: FormPageProps) {
  return (
    <Layout title="Create your account">
      <div class="card">
        <h1>Create your account</h1>
        <p class="lead">We will e-mail you a link to confirm your address.</p>
        <NoticeBox notice={notice} />
        <Form action="/register" csrf={csrf}>
          <Field name="name" label="Name" form={form} autoComplete="name" />
          <Field name="email" label="E-mail address" type="email" form={form} autoComplete="email" />
          <Field name="password" label="Password" type="password" form={form} autoComplete="new-password" minLength={8} hint="8 to 128 characters." />
          <Field name="company" label="Company (optional)" form={form} autoComplete="organization" required={false} />
          <Button block>Create account</Button>
        </Form>
        <ProviderLinks providers={providers} />
      </div>
      <div class="aside">
        <p>
          Already have an account? <a href="/login">Sign in</a>
        </p>
      </div>
    </Layout>
  );
}

/** After registration or a resend: the same page for every address, known or not. */
export function CheckInboxPage({ csrf, email, text }: { csrf: string; email: string; text: string }) {
  return (
    <Layout title="Check your inbox">
      <div class="card">
        <h1>Check your inbox</h1>
        <p>{text}</p>
        <p class="lead">
          We wrote to <strong>{email}</strong>. Open the link in that mail to confirm the address, then sign in.
        </p>
        <Form action="/resend-verification" csrf={csrf}>
          <Hidden name="email" value={email} />
          <Actions>
            <a class="button" href="/login">
              Go to sign in
            </a>
            <Button variant="secondary">Send the link again</Button>
          </Actions>
        </Form>
      </div>
    </Layout>
  );
}

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

export function ResendVerificationPage({ csrf, form, notice }: FormPageProps) {
  return (
    <Layout title="Confirm your e-mail address">
      <div class="card">
        <h1>Get a new confirmation link</h1>
        <p class="lead">Enter the address you registered with; a new link replaces the older ones.</p>
        <NoticeBox notice={notice} />
        <Form action="/resend-verification" csrf={csrf}>
          <Field name="email" label="E-mail address" type="email" form={form} autoComplete="email" />
          <Button block>Send a new link</Button>
        </Form>
      </div>
    </Layout>
  );
}

/** A finished step with one way on: "Password changed" and a link to sign in. */
export function DonePage({ title, text, next }: { title: string; text: string; next: { href: string; label: string } }) {
  return (
    <Layout title={title}>
      <div class="card">
        <h1>{title}</h1>
        <Alert tone="success">
          <p>{text}</p>
        </Alert>
        <a class="button button-block" href={next.href}>
          {next.label}
        </a>
      </div>
    </Layout>
  );
}
