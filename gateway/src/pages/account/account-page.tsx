import type { Context as KoaContext } from 'koa';
import type { AccountData, AccountPageProps } from './account-types.ts';
import { AccountPage } from './account.view.tsx';
import type { PageKit } from '../kit/kit.tsx';
import { isRefusal } from '../kit/refusals.ts';

export type AccountPages = {
  /** The account page with these extras, or the sign-in redirect if the session has ended. */
  show(ctx: KoaContext, status: number, props?: Omit<AccountPageProps, 'csrf' | 'data'>): Promise<void>;
  /** For a failure of an account form: the sign-in redirect if the session has ended; false for anything else. */
  signedOut(ctx: KoaContext, error: unknown): boolean;
};

/**
 * An account whose role needs a second factor it does not have yet may see only what setting
 * one up needs: the rest of the page is left empty, not a failure.
 */
async function untilMfaSetUp<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (isRefusal(error, 'MFA_SETUP_REQUIRED')) return undefined;
    throw error;
  }
}

export function createAccountPages(kit: PageKit): AccountPages {
  const toLogin = (ctx: KoaContext) => {
    kit.clearSession(ctx);
    kit.redirect(ctx, '/login?next=/account');
  };
  const signedOut = (ctx: KoaContext, error: unknown) => {
    if (!isRefusal(error, 'UNAUTHORIZED')) return false;
    toLogin(ctx);
    return true;
  };
  async function load(ctx: KoaContext): Promise<AccountData> {
    const caller = kit.call(ctx);
    const [me, sessions, activity, pending, mfa, identities, providers] = await Promise.all([
      caller.auth.me(),
      caller.auth.listSessions(),
      untilMfaSetUp(caller.auth.listActivity()),
      untilMfaSetUp(caller.auth.pendingEmailChange()),
      caller.auth.mfaStatus(),
      untilMfaSetUp(caller.auth.identities()),
      caller.auth.oauthProviders(),
    ]);
    return {
      user: me.user,
      sessions: sessions.sessions,
      activity: activity?.items ?? [],
      pendingEmail: pending?.pending ?? null,
      mfa,
      mfaSetupRequired: !activity || !pending,
      identities,
      providers: providers.providers,
    };
  }
  return {
    signedOut,
    async show(ctx, status, props = {}) {
      let data: AccountData;
      try {
        data = await load(ctx);
      } catch (error) {
        if (signedOut(ctx, error)) return;
        throw error;
      }
      kit.send(ctx, status, <AccountPage csrf={kit.csrf(ctx)} data={data} {...props} />);
    },
  };
}
