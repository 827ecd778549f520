import type Router from '@koa/router';
import type { Notice } from '../kit/components.tsx';
import { DonePage } from '../kit/done.view.tsx';
import { mountAccountForms } from './account-forms.routes.tsx';
import { mountIdentityForms } from './identities/identities.routes.tsx';
import { takeOAuthNotice } from '../oauth/oauth.routes.tsx';
import { mountMfaForms, MFA_DONE_NOTICES } from './mfa/mfa.routes.tsx';
import { createAccountPages, type AccountPages } from './account-page.tsx';
import type { PageKit } from '../kit/kit.tsx';
import { CODE_LABEL } from '../kit/second-factor.view.tsx';
import { currentPassword, stepUpProof } from '../kit/form-proofs.ts';
import { formRefusal, PROOF_TEXTS } from '../kit/refusals.ts';

/** What the account page says after a change it redirected from (`?done=…`): a fixed list, never echoed text. */
const DONE_NOTICES: Record<string, Notice> = {
  profile: { tone: 'success', text: 'Your name and company are saved.' },
  password: { tone: 'success', text: 'Your password is changed. Every other session was signed out.' },
  email: { tone: 'success', text: 'Check your new address: we sent it a link to confirm the change. Until then your address stays as it is.' },
  'email-cancelled': { tone: 'success', text: 'The e-mail change is cancelled: its link no longer works, and your address stays as it is.' },
  session: { tone: 'success', text: 'That session is signed out.' },
  others: { tone: 'success', text: 'Every other session is signed out.' },
  'identity-unlinked': { tone: 'success', text: 'The provider is disconnected: it no longer signs you in.' },
  'password-link': { tone: 'success', text: 'Check your inbox: we sent you a link to set a password.' },
};

const GRACE_WORDS: Record<number, string> = { 0: 'The previous key stopped working.', 3600: 'The previous key keeps working for an hour.', 86400: 'The previous key keeps working for 24 hours.' };

function mountApiKey(router: Router, kit: PageKit, pages: AccountPages): void {
  // A POST, so that the key is only ever in an answer the owner asked for, never cached (no-store).
  kit.post(router, '/account/api-key', async (ctx) => {
    try {
      const { user } = await kit.call(ctx).auth.me();
      await pages.show(ctx, 200, { apiKey: user.api_key });
    } catch (error) {
      if (!pages.signedOut(ctx, error)) throw error;
    }
  });
  kit.post(router, '/account/api-key/rotate', async (ctx, form) => {
    const grace = form.text('grace_seconds');
    if (!/^\d{1,6}$/.test(grace)) {
      return pages.show(ctx, 400, { refused: { name: 'key', notice: { tone: 'error', text: 'Choose how long the current key keeps working.' } } });
    }
    try {
      const result = await kit.call(ctx).auth.rotateApiKey({ grace_seconds: Number(grace), ...stepUpProof(form) });
      const words = GRACE_WORDS[Number(grace)] ?? `The previous key keeps working for ${grace} seconds.`;
      const notice: Notice = { tone: 'success', title: 'New API key made', text: `${words} Update your servers with the key below.` };
      await pages.show(ctx, 200, { apiKey: result.api_key, refused: { name: 'key', notice } });
    } catch (error) {
      if (pages.signedOut(ctx, error)) return;
      const refusal = formRefusal(ctx, error, form, { code: CODE_LABEL }, PROOF_TEXTS);
      await pages.show(ctx, refusal.status, { refused: { name: 'key', form: refusal.form, notice: refusal.notice } });
    }
  });
}

function mountDelete(router: Router, kit: PageKit, pages: AccountPages): void {
  kit.post(router, '/account/delete', async (ctx, form) => {
    try {
      await kit.call(ctx).auth.deleteAccount({ password: currentPassword(form), ...stepUpProof(form) });
    } catch (error) {
      if (pages.signedOut(ctx, error)) return;
      const texts = { INVALID_CREDENTIALS: 'The password is wrong. Your account was not deleted.', ...PROOF_TEXTS };
      const refusal = formRefusal(ctx, error, form, { password: 'Password', code: CODE_LABEL }, texts);
      return pages.show(ctx, refusal.status, { refused: { name: 'delete', form: refusal.form, notice: refusal.notice } });
    }
    // Its sessions went with the account; the browser's cookie is now only clutter.
    kit.clearSession(ctx);
    kit.send(ctx, 200, <DonePage title="Account deleted" text="Your account and everything in it are deleted. We sent a notice to its address." next={{ href: '/register', label: 'Create a new account' }} />);
  });
}

/** GET /account and what it posts to: the profile, key, password, address, second factor, sessions, deletion. */
export function mountAccountPages(router: Router, kit: PageKit): void {
  const pages = createAccountPages(kit);
  kit.get(router, '/account', async (ctx) => {
    const key = typeof ctx.query.done === 'string' ? ctx.query.done : '';
    const done = Object.hasOwn(DONE_NOTICES, key) ? DONE_NOTICES[key] : undefined;
    // The second factor's changes are told in its card, where their forms bring the reader back to.
    const inCard = Object.hasOwn(MFA_DONE_NOTICES, key) ? MFA_DONE_NOTICES[key] : undefined;
    // A connection refused (the provider's person is another account's) comes back here through /login.
    const refusedLink = takeOAuthNotice(ctx, kit.deps.config);
    await pages.show(ctx, 200, { notice: refusedLink ?? done, refused: inCard });
  });
  mountApiKey(router, kit, pages);
  mountDelete(router, kit, pages);
  mountAccountForms(router, kit, pages);
  mountMfaForms(router, kit, pages);
  mountIdentityForms(router, kit, pages);
}
