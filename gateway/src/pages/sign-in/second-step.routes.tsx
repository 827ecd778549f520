import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { safeNextPath, toErrorResponse } from '../../../../server/src/index.ts';
import { clearedCookieHeader, cookieHeader, hostCookieName, readCookie } from '../../procedure-context.ts';
import type { Notice } from '../kit/components.tsx';
import { RECOVERY_CODE_LABEL, SecondStepPage, TOTP_CODE_LABEL, type SecondStepMethod } from './second-step.view.tsx';
import { LoginPage } from './sign-in.view.tsx';
import type { FormFields } from '../kit/form-body.ts';
import { passkeyAnswer, type PasskeyAssertion } from '../kit/form-proofs.ts';
import type { PageKit } from '../kit/kit.tsx';
import { formRefusal, isRefusal } from '../kit/refusals.ts';

/** As long as the sign-in token it holds: the second step must come within five minutes. */
const PENDING_MAX_AGE_SECONDS = 300;
const METHODS: readonly SecondStepMethod[] = ['totp', 'passkey', 'recovery_code'];
const TOKEN = /^[\w-]{20,200}$/;

/** A password sign-in waiting for its second step: the token for it, and how the account can give it. */
type PendingSignIn = { token: string; methods: SecondStepMethod[] };

/**
 * The cookie that carries a pending sign-in from the password to the second step: HttpOnly,
 * so no script reads the token, and never in a URL or a page, where it could leak through
 * history, logs or a shared screen. `__Host-` over https, like the device cookie.
 */
export function createPendingSignIns(kit: PageKit) {
  const { config } = kit.deps;
  const name = hostCookieName(config, 'svc_mfa');
  return {
    /** From the MFA_REQUIRED refusal of the password sign-in: its `mfa_token` and `methods`. */
    keep(ctx: KoaContext, token: string, methods: string[]): void {
      // The methods only choose what the page offers; the procedures decide what is accepted.
      const known = METHODS.filter((method) => methods.includes(method));
      ctx.append('Set-Cookie', cookieHeader(config, name, [token, ...known].join('.'), PENDING_MAX_AGE_SECONDS));
    },
    read(ctx: KoaContext): PendingSignIn | undefined {
      const [token, ...rest] = (readCookie(ctx.get('cookie'), name) ?? '').split('.');
      if (!TOKEN.test(token)) return undefined;
      return { token, methods: METHODS.filter((method) => rest.includes(method)) };
    },
    clear(ctx: KoaContext): void {
      if (readCookie(ctx.get('cookie'), name) !== undefined) ctx.append('Set-Cookie', clearedCookieHeader(config, name));
    },
  };
}

export type PendingSignIns = ReturnType<typeof createPendingSignIns>;

/** Back to the password with `notice` (a key of the login page's fixed list), `next` kept. */
function loginAgainPath(notice: string | undefined, next: string | undefined): string {
  const query = new URLSearchParams();
  if (notice) query.set('notice', notice);
  if (next) query.set('next', next);
  const text = query.toString();
  return text ? `/login?${text}` : '/login';
}

type Shown = { next?: string; recovery: boolean; notice?: Notice; errors?: Record<string, string> };

async function showSecondStep(ctx: KoaContext, kit: PageKit, pendings: PendingSignIns, pending: PendingSignIn, status: number, shown: Shown): Promise<void> {
  let passkeyOptions: string | undefined;
  if (pending.methods.includes('passkey')) {
    try {
      const { options } = await kit.call(ctx).auth.passkeyLoginOptions({ mfa_token: pending.token });
      passkeyOptions = JSON.stringify(options);
    } catch (error) {
      if (!isRefusal(error, 'INVALID_TOKEN')) throw error;
      pendings.clear(ctx);
      return kit.redirect(ctx, loginAgainPath('expired', shown.next));
    }
  }
  const recovery = shown.recovery || !pending.methods.includes('totp');
  const page = { csrf: kit.csrf(ctx), methods: pending.methods, next: shown.next, passkeyOptions, recovery, notice: shown.notice, form: { errors: shown.errors } };
  kit.send(ctx, status, <SecondStepPage {...page} />);
}

/** POST /login/mfa: the code, or the passkey's answer, for the pending sign-in. */
async function finishSignIn(ctx: KoaContext, kit: PageKit, pendings: PendingSignIns, form: FormFields): Promise<void> {
  const next = safeNextPath(form.text('next'));
  const pending = pendings.read(ctx);
  if (!pending) return kit.redirect(ctx, loginAgainPath('expired', next));
  const recovery = form.text('use') === 'recovery';
  try {
    const response = passkeyAnswer<PasskeyAssertion>(form);
    // Sets svc_token and the device cookie, as the password sign-in does for an account without a second factor.
    await kit.call(ctx).auth.loginMfa(response === undefined ? { mfa_token: pending.token, code: form.text('code') } : { mfa_token: pending.token, response });
    pendings.clear(ctx);
    kit.redirect(ctx, next ?? '/account');
  } catch (error) {
    // Expired, finished, or spent by five wrong codes: only a new sign-in helps.
    if (isRefusal(error, 'INVALID_TOKEN')) {
      pendings.clear(ctx);
      return kit.redirect(ctx, loginAgainPath('expired', next));
    }
    const label = recovery || !pending.methods.includes('totp') ? RECOVERY_CODE_LABEL : TOTP_CODE_LABEL;
    const wrong = form.text('response') === '' ? 'The code is wrong or was already used.' : 'That passkey could not be used. Try again, or enter a code.';
    const refusal = formRefusal(ctx, error, form, { code: label }, { INVALID_CREDENTIALS: wrong });
    await showSecondStep(ctx, kit, pendings, pending, refusal.status, { next, recovery, notice: refusal.notice, errors: refusal.form.errors });
  }
}

const PASSKEY_REFUSED: Notice = { tone: 'error', text: 'That passkey could not be used. Try again, or sign in with your password.' };

/** POST /login/passkey: a sign-in by passkey alone, its answer made by the script on /login. */
async function signInWithPasskey(ctx: KoaContext, kit: PageKit, form: FormFields): Promise<void> {
  const next = safeNextPath(form.text('next'));
  try {
    const response = passkeyAnswer<PasskeyAssertion>(form);
    if (!response) return kit.send(ctx, 400, <LoginPage csrf={kit.csrf(ctx)} next={next} notice={PASSKEY_REFUSED} />);
    await kit.call(ctx).auth.loginPasskey({ response });
    kit.redirect(ctx, next ?? '/account');
  } catch (error) {
    const { code, status } = toErrorResponse(error);
    if (code === 'RATE_LIMITED') {
      const refusal = formRefusal(ctx, error, form, {});
      return kit.send(ctx, refusal.status, <LoginPage csrf={kit.csrf(ctx)} next={next} notice={refusal.notice} />);
    }
    if (code !== 'INVALID_CREDENTIALS' && code !== 'VALIDATION_FAILED') throw error;
    kit.send(ctx, status, <LoginPage csrf={kit.csrf(ctx)} next={next} notice={PASSKEY_REFUSED} />);
  }
}

/** The second step of a password sign-in (/login/mfa), and the sign-in by passkey alone (/login/passkey). */
export function mountSecondStep(router: Router, kit: PageKit, pendings: PendingSignIns): void {
  kit.get(router, '/login/mfa', async (ctx) => {
    const next = safeNextPath(typeof ctx.query.next === 'string' ? ctx.query.next : undefined);
    const pending = pendings.read(ctx);
    if (!pending) return kit.redirect(ctx, loginAgainPath(undefined, next));
    await showSecondStep(ctx, kit, pendings, pending, 200, { next, recovery: ctx.query.use === 'recovery' });
  });
  kit.post(router, '/login/mfa', (ctx, form) => finishSignIn(ctx, kit, pendings, form));
  kit.post(router, '/login/passkey', (ctx, form) => signInWithPasskey(ctx, kit, form));
}
