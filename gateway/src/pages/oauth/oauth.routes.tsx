import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { AppError, type Config, identityFlows, safeNextPath } from '../../../../server/src/index.ts';
import { clearedCookieHeader, cookieHeader, hostCookieName, readCookie } from '../../procedure-context.ts';
import type { Notice } from '../kit/components.tsx';
import { queryText, type PageKit } from '../kit/kit.tsx';
import { createPendingSignIns } from '../sign-in/second-step.routes.tsx';

// GET /api/v1/auth/oauth/{name}/start and /callback (docs/API.md, Identity providers): only a
// browser comes here, sent by a link or by the provider, so the answers are redirects and
// pages, never the API's JSON.

const PENDING_MAX_AGE_SECONDS = 600;
const NOTICE_MAX_AGE_SECONDS = 60;

export const oauthCookieName = (config: Pick<Config, 'publicUrl'>) => hostCookieName(config, 'svc_oauth');
/**
 * Why a sign-in through a provider was refused, told to /login: `<code>.<provider>`, and
 * after CONFLICT `.linked` when the provider's person is connected to another account,
 * `.another` when the account is connected to another person of the provider; never in the URL.
 */
export const oauthNoticeCookieName = (config: Pick<Config, 'publicUrl'>) => hostCookieName(config, 'svc_oauth_notice');

const NOTICES: Record<string, (label: string) => string> = {
  CANCELLED: (label) => `Signing in with ${label} was cancelled.`,
  PROVIDER_FAILED: (label) => `${label} could not confirm who you are. Try again, or sign in another way.`,
  RATE_LIMITED: () => 'Too many sign-in attempts from here: wait a moment and try again.',
  EMAIL_NOT_VERIFIED: (label) => `${label} has not verified your e-mail address, so it cannot sign you in here. Verify it with ${label}, or sign in another way.`,
  CONFLICT: (label) => `An account already uses your ${label} e-mail address. Sign in with your password, then connect ${label} on your account page.`,
  CONFLICT_LINKED: (label) => `This ${label} account is already connected to another account.`,
  CONFLICT_ANOTHER: (label) => `That account is already connected to another ${label} account: disconnect it on the account page first, or continue with that ${label} account.`,
  UNAUTHORIZED: (label) => `Sign in first, then connect ${label} from your account page.`,
};

/** The refusals told as a CONFLICT with a variant, and the notice each variant reads as. */
const CONFLICT_VARIANTS = new Map<string, string>([
  ['IDENTITY_TAKEN', 'linked'],
  ['PROVIDER_IN_USE', 'another'],
]);
const CONFLICT_NOTICES = new Map<string | undefined, string>([
  ['linked', 'CONFLICT_LINKED'],
  ['another', 'CONFLICT_ANOTHER'],
]);

/** The notice a refused sign-in left for /login, once: read and cleared. */
export function takeOAuthNotice(ctx: KoaContext, config: Config): Notice | undefined {
  const name = oauthNoticeCookieName(config);
  const value = readCookie(ctx.get('cookie'), name);
  if (value === undefined) return undefined;
  ctx.append('Set-Cookie', clearedCookieHeader(config, name));
  const [code, provider, variant] = value.split('.');
  const reason = (code === 'CONFLICT' && CONFLICT_NOTICES.get(variant)) || code;
  const label = config.oauthProviders.find((candidate) => candidate.name === provider)?.label;
  if (!label || !Object.hasOwn(NOTICES, reason)) return undefined;
  return { tone: 'error', text: NOTICES[reason](label) };
}

/** 302, as a provider's redirect is answered (a page's form POST gets 303 from the kit). */
function found(kit: PageKit, ctx: KoaContext, location: string): void {
  kit.redirect(ctx, location);
  ctx.status = 302;
}

export function mountOAuthRoutes(router: Router, kit: PageKit): void {
  const { config } = kit.deps;
  const pendings = createPendingSignIns(kit);

  kit.get(router, '/api/v1/auth/oauth/:name/start', async (ctx) => {
    const intent = ctx.query.intent ?? 'login';
    if (intent !== 'login' && intent !== 'link') {
      throw new AppError('VALIDATION_FAILED', undefined, { issues: [{ path: 'intent', message: 'must be login or link' }] });
    }
    const next = safeNextPath(queryText(ctx, 'next'));
    const ticket = queryText(ctx, 'ticket');
    const { url, cookie } = await identityFlows.start(kit.context(ctx), { provider: ctx.params.name, next, intent, ticket });
    ctx.append('Set-Cookie', cookieHeader(config, oauthCookieName(config), cookie, PENDING_MAX_AGE_SECONDS));
    found(kit, ctx, url);
  });

  kit.get(router, '/api/v1/auth/oauth/:name/callback', async (ctx) => {
    const cookieName = oauthCookieName(config);
    const sealed = readCookie(ctx.get('cookie'), cookieName);
    // Single use: whatever happens next, the browser drops it.
    if (sealed !== undefined) ctx.append('Set-Cookie', clearedCookieHeader(config, cookieName));
    const outcome = await identityFlows.finish(kit.context(ctx), { provider: ctx.params.name, query: new URLSearchParams(ctx.querystring), sealed });
    const next = outcome.next;
    // Signed in: the session cookie and, for a browser new to the account, the device cookie
    // are in the page's context, as a password sign-in sets them; the redirect sends them.
    if (outcome.kind === 'signed-in') return found(kit, ctx, next ?? '/account');
    if (outcome.kind === 'second-step') {
      pendings.keep(ctx, outcome.mfaToken, outcome.methods);
      return found(kit, ctx, next ? `/login/mfa?${new URLSearchParams({ next })}` : '/login/mfa');
    }
    if (outcome.kind === 'linked') return found(kit, ctx, next ?? '/account');
    const variant = CONFLICT_VARIANTS.get(outcome.reason);
    const told = variant ? `CONFLICT.${outcome.provider}.${variant}` : `${outcome.reason}.${outcome.provider}`;
    ctx.append('Set-Cookie', cookieHeader(config, oauthNoticeCookieName(config), told, NOTICE_MAX_AGE_SECONDS));
    found(kit, ctx, next ? `/login?${new URLSearchParams({ next })}` : '/login');
  });
}
