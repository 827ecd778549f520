import type Router from '@koa/router';
import { CODE_LABEL } from '../kit/second-factor.view.tsx';
import type { AccountPages } from './account-page.tsx';
import { currentPassword, stepUpProof } from '../kit/form-proofs.ts';
import type { PageKit } from '../kit/kit.tsx';
import { formRefusal, PROOF_TEXTS } from '../kit/refusals.ts';

const PASSWORD_LABELS = { current_password: 'Current password', new_password: 'New password', code: CODE_LABEL };
const EMAIL_LABELS = { new_email: 'New e-mail address', password: 'Password', code: CODE_LABEL };
const PROFILE_LABELS = { name: 'Name', company: 'Company' };

function mountProfileChange(router: Router, kit: PageKit, pages: AccountPages): void {
  kit.post(router, '/account/profile', async (ctx, form) => {
    try {
      // The form sends both as shown: an emptied company clears it, and what did not move changes
      // nothing. A field left out of the post is left alone, never cleared.
      const sent = (name: string) => (form.has(name) ? form.text(name) : undefined);
      await kit.call(ctx).auth.updateProfile({ name: sent('name'), company: sent('company') });
      kit.redirect(ctx, '/account?done=profile');
    } catch (error) {
      if (pages.signedOut(ctx, error)) return;
      const refusal = formRefusal(ctx, error, form, PROFILE_LABELS);
      await pages.show(ctx, refusal.status, { refused: { name: 'profile', form: refusal.form, notice: refusal.notice } });
    }
  });
}

function mountPasswordChange(router: Router, kit: PageKit, pages: AccountPages): void {
  kit.post(router, '/account/password', async (ctx, form) => {
    try {
      await kit.call(ctx).auth.changePassword({ current_password: currentPassword(form, 'current_password'), new_password: form.text('new_password'), ...stepUpProof(form) });
      kit.redirect(ctx, '/account?done=password');
    } catch (error) {
      if (pages.signedOut(ctx, error)) return;
      const refusal = formRefusal(ctx, error, form, PASSWORD_LABELS, { INVALID_CREDENTIALS: 'The current password is wrong. Nothing was changed.', ...PROOF_TEXTS });
      await pages.show(ctx, refusal.status, { refused: { name: 'password', form: refusal.form, notice: refusal.notice } });
    }
  });
}

function mountEmailChange(router: Router, kit: PageKit, pages: AccountPages): void {
  kit.post(router, '/account/email', async (ctx, form) => {
    try {
      await kit.call(ctx).auth.changeEmail({ new_email: form.text('new_email'), password: currentPassword(form), ...stepUpProof(form) });
      kit.redirect(ctx, '/account?done=email');
    } catch (error) {
      if (pages.signedOut(ctx, error)) return;
      const refusal = formRefusal(ctx, error, form, EMAIL_LABELS, { INVALID_CREDENTIALS: 'The password is wrong. Your address was not changed.', ...PROOF_TEXTS });
      await pages.show(ctx, refusal.status, { refused: { name: 'email', form: refusal.form, notice: refusal.notice } });
    }
  });
  kit.post(router, '/account/email/cancel', async (ctx, form) => {
    try {
      await kit.call(ctx).auth.cancelEmailChange();
      kit.redirect(ctx, '/account?done=email-cancelled');
    } catch (error) {
      if (pages.signedOut(ctx, error)) return;
      const refusal = formRefusal(ctx, error, form, {});
      await pages.show(ctx, refusal.status, { refused: { name: 'email', notice: refusal.notice } });
    }
  });
}

function mountSessions(router: Router, kit: PageKit, pages: AccountPages): void {
  kit.post(router, '/account/sessions/revoke', async (ctx, form) => {
    try {
      await kit.call(ctx).auth.revokeSession({ id: form.text('session_id') });
      kit.redirect(ctx, '/account?done=session');
    } catch (error) {
      if (pages.signedOut(ctx, error)) return;
      const refusal = formRefusal(ctx, error, form, {}, { NOT_FOUND: 'That session had already ended.' });
      await pages.show(ctx, refusal.status, { refused: { name: 'sessions', notice: refusal.notice } });
    }
  });
  kit.post(router, '/account/sessions/revoke-others', async (ctx, form) => {
    try {
      await kit.call(ctx).auth.revokeAllSessions({ keep_current: true });
      kit.redirect(ctx, '/account?done=others');
    } catch (error) {
      if (pages.signedOut(ctx, error)) return;
      const refusal = formRefusal(ctx, error, form, {});
      await pages.show(ctx, refusal.status, { refused: { name: 'sessions', notice: refusal.notice } });
    }
  });
}

/** The account page's forms that change something and then come back to it (POST, redirect, GET): profile, password, address, sessions. */
export function mountAccountForms(router: Router, kit: PageKit, pages: AccountPages): void {
  mountProfileChange(router, kit, pages);
  mountPasswordChange(router, kit, pages);
  mountEmailChange(router, kit, pages);
  mountSessions(router, kit, pages);
}
