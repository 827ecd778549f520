import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import type { Notice } from '../../kit/components.tsx';
import { queryText, type PageKit } from '../../kit/kit.tsx';
import { isRefusal } from '../../kit/refusals.ts';
import type { Console, Operator } from '../console/console.tsx';
import { ConfirmPage } from '../console/console.view.tsx';
import { AccountPage, AccountsPage } from './accounts.view.tsx';

/** What the account's page says after an action it redirected from (`?done=…`): a fixed list, never echoed text. */
const DONE: Record<string, Notice> = {
  'sessions-revoked': { tone: 'success', text: 'The account is signed out everywhere, and its owner was mailed.' },
  'mfa-reset': { tone: 'success', text: 'The second factor is reset: the account signs in with its password alone until its owner sets one up again.' },
  'role-admin': { tone: 'success', text: 'The account is now an admin.' },
  'role-user': { tone: 'success', text: 'The account is now a user.' },
  'verification-sent': { tone: 'success', text: 'A new verification link was mailed to the address.' },
};

const doneNotice = (ctx: KoaContext) => {
  const key = queryText(ctx, 'done') ?? '';
  return Object.hasOwn(DONE, key) ? DONE[key] : undefined;
};

export function mountAccountsPages(router: Router, kit: PageKit, consolePages: Console): void {
  consolePages.page(router, '/admin/accounts', async (ctx, operator) => {
    const q = queryText(ctx, 'q') ?? '';
    const cursor = queryText(ctx, 'cursor');
    const search = await kit.call(ctx).admin.searchAccounts({ q: q.trim() || undefined, cursor, limit: 50 });
    kit.send(ctx, 200, <AccountsPage operator={operator} q={q} paged={cursor !== undefined} search={search} />);
  });

  const show = async (ctx: KoaContext, operator: Operator, status: number, notice?: Notice) => {
    const details = await kit.call(ctx).admin.account({ id: ctx.params.id });
    kit.send(ctx, status, <AccountPage operator={operator} details={details} notice={notice} />);
  };
  consolePages.page(router, '/admin/accounts/:id', (ctx, operator) => show(ctx, operator, 200, doneNotice(ctx)));

  const back = (ctx: KoaContext) => ({ href: `/admin/accounts/${encodeURIComponent(ctx.params.id)}`, label: 'Back to the account' });
  const target = (ctx: KoaContext) => `account #${ctx.params.id}`;

  consolePages.action(
    router,
    '/admin/accounts/:id/revoke-sessions',
    [],
    { confirm: (ctx) => ({ title: 'Sign out everywhere', text: `Confirm signing ${target(ctx)} out of every session.`, button: 'Sign out everywhere', back: back(ctx) }) },
    async (ctx) => {
      await kit.call(ctx).admin.revokeSessions({ id: ctx.params.id });
      kit.redirect(ctx, `/admin/accounts/${ctx.params.id}?done=sessions-revoked`);
    },
  );
  // Resetting removes the factors: it asks first, on a page of its own, as removing an endpoint does.
  const resetConfirmation = (ctx: KoaContext, name = target(ctx)) => ({
    title: 'Reset the second factor?',
    text: `The authenticator app, passkeys and recovery codes of ${name} will be removed, and its password alone will sign it in. Make sure who is asking. The owner is mailed.`,
    button: 'Reset the second factor',
    danger: true,
    back: back(ctx),
  });
  consolePages.page(router, '/admin/accounts/:id/reset-mfa', async (ctx, operator) => {
    const { account } = await kit.call(ctx).admin.account({ id: ctx.params.id });
    const confirmation = { ...resetConfirmation(ctx, `${account.email} (#${account.id})`), action: `/admin/accounts/${account.id}/reset-mfa`, fields: { confirm: 'yes' } };
    kit.send(ctx, 200, <ConfirmPage viewer={operator} operator={operator} confirmation={confirmation} />);
  });
  consolePages.action(
    router,
    '/admin/accounts/:id/reset-mfa',
    ['confirm'],
    { confirm: (ctx) => resetConfirmation(ctx) },
    async (ctx, form, operator) => {
      if (form.text('confirm') !== 'yes') return show(ctx, operator, 400, { tone: 'error', text: 'Resetting asks for its confirmation page. Nothing was changed.' });
      await kit.call(ctx).admin.resetMfa({ id: ctx.params.id });
      kit.redirect(ctx, `/admin/accounts/${ctx.params.id}?done=mfa-reset`);
    },
  );
  consolePages.action(
    router,
    '/admin/accounts/:id/role',
    ['role'],
    { confirm: (ctx, form) => ({ title: 'Change the role', text: `Confirm making ${target(ctx)} ${form.text('role') === 'admin' ? 'an admin' : 'a user'}.`, button: 'Change the role', back: back(ctx) }) },
    async (ctx, form, operator) => {
      const role = form.text('role');
      if (role !== 'admin' && role !== 'user') return show(ctx, operator, 400, { tone: 'error', text: 'Choose the role admin or user. Nothing was changed.' });
      try {
        await kit.call(ctx).admin.setRole({ id: ctx.params.id, role });
      } catch (error) {
        if (!isRefusal(error, 'CONFLICT')) throw error;
        return show(ctx, operator, 409, { tone: 'error', text: 'This is the last admin: make another account an admin first. Nothing was changed.' });
      }
      kit.redirect(ctx, `/admin/accounts/${ctx.params.id}?done=role-${role}`);
    },
  );
  consolePages.action(
    router,
    '/admin/accounts/:id/resend-verification',
    [],
    { confirm: (ctx) => ({ title: 'Resend the verification link', text: `Confirm mailing ${target(ctx)} a new verification link.`, button: 'Send the link', back: back(ctx) }) },
    async (ctx, _form, operator) => {
      try {
        await kit.call(ctx).admin.resendVerification({ id: ctx.params.id });
      } catch (error) {
        if (!isRefusal(error, 'CONFLICT')) throw error;
        return show(ctx, operator, 409, { tone: 'warning', text: 'The address is confirmed already; no link was sent.' });
      }
      kit.redirect(ctx, `/admin/accounts/${ctx.params.id}?done=verification-sent`);
    },
  );
}
