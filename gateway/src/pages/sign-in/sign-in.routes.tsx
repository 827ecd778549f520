import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { ForgotPasswordPage, LoginPage } from './sign-in.view.tsx';
import { safeNextPath, toErrorResponse } from '../../../../server/src/index.ts';
import type { Notice } from '../kit/components.tsx';
import type { FormFields } from '../kit/form-body.ts';
import { queryText, type PageKit } from '../kit/kit.tsx';
import { providerLinks } from '../kit/provider-links.ts';
import { takeOAuthNotice } from '../oauth/oauth.routes.tsx';
import { formRefusal, isRefusal } from '../kit/refusals.ts';
import { createPendingSignIns, mountSecondStep, type PendingSignIns } from './second-step.routes.tsx';

const LOGIN_LABELS = { email: 'E-mail address', password: 'Password' };
const EMAIL_LABELS = { email: 'E-mail address' };

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

function mountForgotPassword(router: Router, kit: PageKit): void {
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

}

/** Sign in (with a password and its second step, or a passkey) and out, and the form that mails a reset link. */
export function mountSignInPages(router: Router, kit: PageKit): void {
  mountLogin(router, kit);
  mountForgotPassword(router, kit);
}
