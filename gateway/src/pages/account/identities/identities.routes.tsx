import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { toErrorResponse } from '../../../../../server/src/index.ts';
import { CODE_LABEL } from '../../kit/second-factor.view.tsx';
import type { AccountPages } from '../account-page.tsx';
import { currentPassword, stepUpProof } from '../../kit/form-proofs.ts';
import type { PageKit } from '../../kit/kit.tsx';
import { formRefusal, PROOF_TEXTS } from '../../kit/refusals.ts';

const PROOF_LABELS = { password: 'Password', code: CODE_LABEL };

/** The "Connected accounts" card's forms: connect and disconnect a provider, and mail a link to set a password. */
export function mountIdentityForms(router: Router, kit: PageKit, pages: AccountPages): void {
  /**
   * Both forms give the password (left empty by an account without one: a recent sign-in
   * through a provider stands in) and the step-up; a refusal is shown beside the provider's
   * form, and REAUTH_REQUIRED sends the browser to sign in with the provider again first.
   */
  const identityForm = (path: string, act: (ctx: KoaContext, name: string, proof: { password?: string } & ReturnType<typeof stepUpProof>) => Promise<string>) =>
    kit.post(router, path, async (ctx, form) => {
      const name = ctx.params.name ?? form.text('name');
      try {
        kit.redirect(ctx, await act(ctx, name, { password: currentPassword(form), ...stepUpProof(form) }));
      } catch (error) {
        if (pages.signedOut(ctx, error)) return;
        const { code, body } = toErrorResponse(error);
        if (code === 'REAUTH_REQUIRED' && body.reauth_url) return kit.redirect(ctx, body.reauth_url);
        const refusal = formRefusal(ctx, error, form, PROOF_LABELS, { INVALID_CREDENTIALS: 'The password is wrong. Nothing was changed.', ...PROOF_TEXTS });
        await pages.show(ctx, refusal.status, { refused: { name: 'identities', form: refusal.form, notice: refusal.notice, target: name } });
      }
    });
  identityForm('/account/identities/unlink', async (ctx, name, proof) => {
    await kit.call(ctx).auth.unlinkIdentity({ name, ...proof });
    return '/account?done=identity-unlinked';
  });
  // The answer's start URL carries the ticket for this session: the provider's sign-in starts there.
  identityForm('/account/identities/:name/connect', async (ctx, name, proof) => (await kit.call(ctx).auth.linkIdentity({ name, ...proof, next: '/account' })).start_url);
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
