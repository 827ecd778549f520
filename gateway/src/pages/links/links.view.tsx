import { Button, Field, Form, Hidden, NoticeBox, type FormState, type Notice } from '../kit/components.tsx';
import { Layout } from '../kit/layout.tsx';

/**
 * The pages e-mailed links open. Each GET shows a form that posts the link's token back:
 * opening the page uses nothing (mail scanners open links).
 */
export type TokenLink = 'verify' | 'reset' | 'confirm';

/** Where to get a fresh link of each kind when one is dead. */
const FRESH_LINK: Record<TokenLink, { href: string; label: string }> = {
  verify: { href: '/resend-verification', label: 'Get a new confirmation link' },
  reset: { href: '/forgot-password', label: 'Ask for a new reset link' },
  confirm: { href: '/account', label: 'Go to your account to ask again' },
};

function TokenButtonPage(props: { title: string; intro: string; action: string; label: string; token: string; csrf: string }) {
  return (
    <Layout title={props.title}>
      <div class="card">
        <h1>{props.title}</h1>
        <p>{props.intro}</p>
        <Form action={props.action} csrf={props.csrf}>
          <Hidden name="token" value={props.token} />
          <Button block>{props.label}</Button>
        </Form>
      </div>
    </Layout>
  );
}

export function VerifyEmailPage({ token, csrf }: { token: string; csrf: string }) {
  return (
    <TokenButtonPage
      title="Confirm your e-mail address"
      intro="Press the button to confirm your e-mail address and finish creating your account."
      action="/verify-email"
      label="Confirm e-mail address"
      token={token}
      csrf={csrf}
    />
  );
}

export function ConfirmEmailPage({ token, csrf }: { token: string; csrf: string }) {
  return (
    <TokenButtonPage
      title="Confirm your new e-mail address"
      intro="Press the button to move your account to this address. You will sign in with it from then on."
      action="/confirm-email"
      label="Confirm new address"
      token={token}
      csrf={csrf}
    />
  );
}

export function ResetPasswordPage({ token, csrf, form, notice }: { token: string; csrf: string; form?: FormState; notice?: Notice }) {
  return (
    <Layout title="Choose a new password">
      <div class="card">
        <h1>Choose a new password</h1>
        <p class="lead">8 to 128 characters. Every device signed in to your account will be signed out.</p>
        <NoticeBox notice={notice} />
        <Form action="/reset-password" csrf={csrf}>
          <Hidden name="token" value={token} />
          <Field name="password" label="New password" type="password" form={form} autoComplete="new-password" minLength={8} />
          <Button block>Set new password</Button>
        </Form>
      </div>
    </Layout>
  );
}

/** A link without a token (cut short when copied), or one that is unknown, used or expired. */
export function LinkProblemPage({ link, problem }: { link: TokenLink; problem: 'incomplete' | 'dead' }) {
  const title = problem === 'incomplete' ? 'Link incomplete' : 'Link no longer valid';
  const text =
    problem === 'incomplete'
      ? 'This link has no token. Open the link from the e-mail again, or copy all of it into the address bar.'
      : 'This link is unknown, already used or expired. Ask for a new one and use the latest mail.';
  const fresh = FRESH_LINK[link];
  return (
    <Layout title={title}>
      <div class="card">
        <h1>{title}</h1>
        <p>{text}</p>
        <a class="button button-secondary" href={fresh.href}>
          {fresh.label}
        </a>
      </div>
    </Layout>
  );
}
