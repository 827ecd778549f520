import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { CheckInboxPage, ForgotPasswordPage, LoginPage, RegisterPage, ResendVerificationPage } from '../../pages/public-views.tsx';
import { safeNextPath, toErrorResponse } from '../../../../server/src/index.ts';
import type { Notice } from '../../pages/components.tsx';
import type { FormFields } from './form-body.ts';
import type { PageKit } from './kit.tsx';
import { takeOAuthNotice } from './oauth.tsx';
import { formRefusal, isRefusal } from './refusals.ts';
import { createPendingSignIns, mountSecondStep, type PendingSignIns } from './second-step.tsx';

const REGISTER_LABELS = { name: 'Name', email: 'E-mail address', password: 'Password', company: 'Company' };
const LOGIN_LABELS = { email: 'E-mail address', password: 'Password' };
const EMAIL_LABELS = { email: 'E-mail address' };

/** "Continue with {label}" for each identity provider, coming back to `next` after. */
async function providerLinks(ctx: KoaContext, kit: PageKit, next?: string) {
  const { providers } = await kit.call(ctx).auth.oauthProviders();
  return providers.map((provider) => ({ label: provider.label, href: next ? `${provider.start_url}?${new URLSearchParams({ next })}` : provider.start_url }));
}

const queryText = (ctx: KoaContext, name: string) => (typeof ctx.query[name] === 'string' ? (ctx.query[name] as string) : undefined);

function mountRegister(router: Router, kit: PageKit): void {
  kit.get(router, '/register', async (ctx) => kit.send(ctx, 200, <RegisterPage csrf={kit.csrf(ctx)} providers={await providerLinks(ctx, kit)} />));
  kit.post(router, '/register', async (ctx, form) => {
    const input = { name: form.text('name'), email: form.text('email'), password: form.text('password'), company: form.text('company') };
    try {
      const result = await kit.call(ctx).auth.register(input);
      kit.send(ctx, 200, <CheckInboxPage csrf={kit.csrf(ctx)} email={input.email.trim()} text={result.message} />);
    } catch (error) {
      const refusal = formRefusal(ctx, error, form, REGISTER_LABELS);
      kit.send(ctx, refusal.status, <RegisterPage csrf={kit.csrf(ctx)} form={refusal.form} notice={refusal.notice} providers={await providerLinks(ctx, kit)} />);
    }
  });
}

/** What the sign-in page says when another page sent the reader back to it (`?notice=…`): a fixed list, never echoed text. */
const LOGIN_NOTICES: Record<string, Notice> = {
  expired: { tone: 'warning', text: 'Your sign-in expired: sign in again.' },
};

/** The password was right and the account has a second factor: on to its step, the sign-in kept in a cookie. */
function toSecondStep(ctx: KoaContext, kit: PageKit, pendings: PendingSignIns, error: unknown, next: string | undefined): boolean {
  const { code, body } = toErrorResponse(error);
  if (code !== 'MFA_REQUIRED' || !body.mfa_token) return false;
  pendings.keep(ctx, body.mfa_token, body.methods ?? []);
  kit.redirect(ctx, next ? `/login/mfa?${new URLSearchParams({ next })}` : '/login/mfa');
  return true;
}

async function signIn(ctx: KoaContext, kit: PageKit, pendings: PendingSignIns, form: FormFields): Promise<void> {
  const next = safeNextPath(form.text('next'));
  try {
    // Sets svc_token, and the device cookie for a browser new to the account, as the REST login does.
    await kit.call(ctx).auth.login({ email: form.text('email'), password: form.text('password') });
    kit.redirect(ctx, next ?? '/account');
  } catch (error) {
    if (toSecondStep(ctx, kit, pendings, error, next)) return;
    const refusal = formRefusal(ctx, error, form, LOGIN_LABELS, {
      INVALID_CREDENTIALS: 'The e-mail address or password is wrong.',
      EMAIL_NOT_VERIFIED: 'Your e-mail address is not confirmed yet.',
    });
    const unverifiedEmail = refusal.code === 'EMAIL_NOT_VERIFIED' ? form.text('email').trim() : undefined;
    const notice = unverifiedEmail ? undefined : refusal.notice;
    const providers = await providerLinks(ctx, kit, next);
    kit.send(ctx, refusal.status, <LoginPage csrf={kit.csrf(ctx)} form={refusal.form} notice={notice} next={next} unverifiedEmail={unverifiedEmail} providers={providers} />);
  }
}

/** Whether the browser's session cookie signs it in (a stale or revoked one does not). */
async function isSignedIn(ctx: KoaContext, kit: PageKit): Promise<boolean> {
  if (!kit.sessionCookie(ctx)) return false;
  try {
    await kit.call(ctx).auth.me();
    return true;
  } catch (error) {
    if (!isRefusal(error, 'UNAUTHORIZED')) throw error;
    return false;
  }
}

function mountLogin(router: Router, kit: PageKit): void {
  const pendings = createPendingSignIns(kit);
  // The site's root is a page too: where a person is sent who types the bare address.
  kit.get(router, '/', async (ctx) => kit.redirect(ctx, (await isSignedIn(ctx, kit)) ? '/account' : '/login'));
  kit.get(router, '/login', async (ctx) => {
    const next = safeNextPath(queryText(ctx, 'next'));
    const key = queryText(ctx, 'notice');
    if (await isSignedIn(ctx, kit)) return kit.redirect(ctx, next ?? '/account');
    // After the redirect of a signed-in browser: the account page tells a refused connection then.
    const notice = takeOAuthNotice(ctx, kit.deps.config) ?? (key !== undefined && Object.hasOwn(LOGIN_NOTICES, key) ? LOGIN_NOTICES[key] : undefined);
    kit.send(ctx, 200, <LoginPage csrf={kit.csrf(ctx)} next={next} notice={notice} providers={await providerLinks(ctx, kit, next)} />);
  });
  kit.post(router, '/login', (ctx, form) => signIn(ctx, kit, pendings, form));
  mountSecondStep(router, kit, pendings);

  kit.post(router, '/logout', async (ctx) => {
    try {
      // Revokes the session; its answer clears the cookie.
      await kit.call(ctx).auth.logout();
    } catch (error) {
      if (!isRefusal(error, 'UNAUTHORIZED')) throw error;
      kit.clearSession(ctx);
    }
    kit.redirect(ctx, '/login');
  });
}

function mountEmailForms(router: Router, kit: PageKit): void {
  kit.get(router, '/forgot-password', (ctx) => kit.send(ctx, 200, <ForgotPasswordPage csrf={kit.csrf(ctx)} />));
  kit.post(router, '/forgot-password', async (ctx, form) => {
    try {
      const result = await kit.call(ctx).auth.forgotPassword({ email: form.text('email') });
      kit.send(ctx, 200, <ForgotPasswordPage csrf={kit.csrf(ctx)} notice={{ tone: 'success', title: 'Check your inbox', text: result.message }} />);
    } catch (error) {
      const refusal = formRefusal(ctx, error, form, EMAIL_LABELS);
      kit.send(ctx, refusal.status, <ForgotPasswordPage csrf={kit.csrf(ctx)} form={refusal.form} notice={refusal.notice} />);
    }
  });

  kit.get(router, '/resend-verification', (ctx) => kit.send(ctx, 200, <ResendVerificationPage csrf={kit.csrf(ctx)} />));
  kit.post(router, '/resend-verification', async (ctx, form) => {
    try {
      const result = await kit.call(ctx).auth.resendVerification({ email: form.text('email') });
      kit.send(ctx, 200, <CheckInboxPage csrf={kit.csrf(ctx)} email={form.text('email').trim()} text={result.message} />);
    } catch (error) {
      const refusal = formRefusal(ctx, error, form, EMAIL_LABELS);
      kit.send(ctx, refusal.status, <ResendVerificationPage csrf={kit.csrf(ctx)} form={refusal.form} notice={refusal.notice} />);
    }
  });
}

/** Register, sign in and out, and the two forms that send a mail (reset link, new confirmation link). */
export function mountPublicPages(router: Router, kit: PageKit): void {
  mountRegister(router, kit);
  mountLogin(router, kit);
  mountEmailForms(router, kit);
}
