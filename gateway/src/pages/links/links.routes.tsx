import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { hasControlCharacter, toErrorResponse } from '../../../../server/src/index.ts';
import { DonePage } from '../kit/done.view.tsx';
import { ConfirmEmailPage, LinkProblemPage, ResetPasswordPage, VerifyEmailPage } from './links.view.tsx';
import type { PageKit } from '../kit/kit.tsx';
import { formRefusal } from '../kit/refusals.ts';

/** The link's token, if it has one that could be put in a page; a GET never uses it. */
function linkToken(ctx: KoaContext): string | undefined {
  const token = ctx.query.token;
  return typeof token === 'string' && token !== '' && !hasControlCharacter(token) ? token : undefined;
}

/** A token the procedure refused (unknown, used, expired, or not a token at all): the link is dead. */
function isDeadLink(error: unknown): boolean {
  const { code } = toErrorResponse(error);
  return code === 'INVALID_TOKEN' || code === 'VALIDATION_FAILED';
}

function mountVerify(router: Router, kit: PageKit): void {
  kit.get(router, '/verify-email', (ctx) => {
    const token = linkToken(ctx);
    if (!token) return kit.send(ctx, 400, <LinkProblemPage link="verify" problem="incomplete" />);
    kit.send(ctx, 200, <VerifyEmailPage token={token} csrf={kit.csrf(ctx)} />);
  });
  kit.post(router, '/verify-email', async (ctx, form) => {
    try {
      const result = await kit.call(ctx).auth.verifyEmail({ token: form.text('token') });
      kit.send(ctx, 200, <DonePage title="E-mail address confirmed" text={result.message} next={{ href: '/login', label: 'Sign in' }} />);
    } catch (error) {
      if (!isDeadLink(error)) throw error;
      kit.send(ctx, 400, <LinkProblemPage link="verify" problem="dead" />);
    }
  });
}

function mountConfirm(router: Router, kit: PageKit): void {
  kit.get(router, '/confirm-email', (ctx) => {
    const token = linkToken(ctx);
    if (!token) return kit.send(ctx, 400, <LinkProblemPage link="confirm" problem="incomplete" />);
    kit.send(ctx, 200, <ConfirmEmailPage token={token} csrf={kit.csrf(ctx)} />);
  });
  kit.post(router, '/confirm-email', async (ctx, form) => {
    try {
      const result = await kit.call(ctx).auth.confirmEmailChange({ token: form.text('token') });
      kit.send(ctx, 200, <DonePage title="New address confirmed" text={result.message} next={{ href: '/account', label: 'Go to your account' }} />);
    } catch (error) {
      if (!isDeadLink(error)) throw error;
      kit.send(ctx, 400, <LinkProblemPage link="confirm" problem="dead" />);
    }
  });
}

const RESET_LABELS = { password: 'New password' };

function mountReset(router: Router, kit: PageKit): void {
  kit.get(router, '/reset-password', (ctx) => {
    const token = linkToken(ctx);
    if (!token) return kit.send(ctx, 400, <LinkProblemPage link="reset" problem="incomplete" />);
    kit.send(ctx, 200, <ResetPasswordPage token={token} csrf={kit.csrf(ctx)} />);
  });
  kit.post(router, '/reset-password', async (ctx, form) => {
    const token = form.text('token');
    try {
      const result = await kit.call(ctx).auth.resetPassword({ token, password: form.text('password') });
      kit.send(ctx, 200, <DonePage title="Password changed" text={result.message} next={{ href: '/login', label: 'Sign in' }} />);
    } catch (error) {
      const refusal = formRefusal(ctx, error, form, RESET_LABELS, { INVALID_TOKEN: 'dead' });
      // A bad new password is the reader's to fix, with the same link; anything else about the token kills it.
      if (refusal.code === 'VALIDATION_FAILED' && refusal.form.errors?.password) {
        return kit.send(ctx, 400, <ResetPasswordPage token={token} csrf={kit.csrf(ctx)} form={refusal.form} notice={refusal.notice} />);
      }
      if (refusal.code === 'RATE_LIMITED') return kit.send(ctx, 429, <ResetPasswordPage token={token} csrf={kit.csrf(ctx)} notice={refusal.notice} />);
      kit.send(ctx, 400, <LinkProblemPage link="reset" problem="dead" />);
    }
  });
}

/**
 * The pages e-mailed links open: confirm an address, confirm a new address, choose a new
 * password. A GET shows a form holding the token and does not use it (mail scanners open
 * links); the form's POST hands it to the same procedure the REST route calls.
 */
export function mountTokenPages(router: Router, kit: PageKit): void {
  mountVerify(router, kit);
  mountConfirm(router, kit);
  mountReset(router, kit);
}
