import { Actions, Button, Field, Form, Hidden, NoticeBox, type FormPageProps } from '../kit/components.tsx';
import { Layout } from '../kit/layout.tsx';
import { ProviderLinks } from '../kit/provider-links.view.tsx';

// The pages of a registration: the form, "check your inbox", and a new confirmation link.

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
