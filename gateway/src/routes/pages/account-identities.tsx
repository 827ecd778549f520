import type Router from '@koa/router';
import { toErrorResponse } from '../../../../server/src/index.ts';
import { CODE_LABEL } from '../../pages/second-factor.tsx';
import type { AccountPages } from './account-page.tsx';
import { stepUpProof } from './form-proofs.ts';
import type { PageKit } from './kit.tsx';
import { formRefusal, PROOF_TEXTS } from './refusals.ts';

const UNLINK_LABELS = { password: 'Password', code: CODE_LABEL };

/** The "Connected accounts" card's forms: disconnect a provider, and mail a link to set a password. */
export function mountIdentityForms(router: Router, kit: PageKit, pages: AccountPages): void {
  kit.post(router, '/account/identities/unlink', async (ctx, form) => {
    const name = form.text('name');
    try {
      // Left empty by an account without a password: a recent sign-in through a provider stands in.
      const password = form.text('password') === '' ? undefined : form.text('password');
      await kit.call(ctx).auth.unlinkIdentity({ name, password, ...stepUpProof(form) });
      kit.redirect(ctx, '/account?done=identity-unlinked');
    } catch (error) {
      if (pages.signedOut(ctx, error)) return;
      // No password to ask for and the sign-in is old: sign in again with the provider, then come back.
      const { code, body } = toErrorResponse(error);
      if (code === 'REAUTH_REQUIRED' && body.reauth_url) return kit.redirect(ctx, body.reauth_url);
      const refusal = formRefusal(ctx, error, form, UNLINK_LABELS, { INVALID_CREDENTIALS: 'The password is wrong. Nothing was changed.', ...PROOF_TEXTS });
      await pages.show(ctx, refusal.status, { refused: { name: 'identities', form: refusal.form, notice: refusal.notice, target: name } });
    }
  });
  kit.post(router, '/account/password/set', async (ctx, form) => {
    try {
      const { user } = await kit.call(ctx).auth.me();
      await kit.call(ctx).auth.forgotPassword({ email: user.email });
      kit.redirect(ctx, '/account?done=password-link');
    } catch (error) {
      if (pages.signedOut(ctx, error)) return;
      const refusal = formRefusal(ctx, error, form, {});
      await pages.show(ctx, refusal.status, { refused: { name: 'identities', notice: refusal.notice } });
    }
  });
}
