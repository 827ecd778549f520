import type Router from '@koa/router';
import type { PageKit } from '../kit/kit.tsx';
import { providerLinks } from '../kit/provider-links.ts';
import { formRefusal } from '../kit/refusals.ts';
import { CheckInboxPage, RegisterPage, ResendVerificationPage } from './register.view.tsx';

const REGISTER_LABELS = { name: 'Name', email: 'E-mail address', password: 'Password', company: 'Company' };
const EMAIL_LABELS = { email: 'E-mail address' };

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

/** A new confirmation link: the same answer for every address. */
function mountResendVerification(router: Router, kit: PageKit): void {
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

/** Registration: the form, "check your inbox", and a new confirmation link. */
export function mountRegisterPages(router: Router, kit: PageKit): void {
  mountRegister(router, kit);
  mountResendVerification(router, kit);
}
