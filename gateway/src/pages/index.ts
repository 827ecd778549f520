import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import type { Deps } from '../../../server/src/index.ts';
import { pageAssets, type Asset } from './kit/assets.ts';
import { mountAccountPages } from './account/account.routes.tsx';
import { mountAdminPages } from './admin/admin.routes.ts';
import { createPageKit } from './kit/kit.tsx';
import { mountTokenPages } from './links/links.routes.tsx';
import { mountOAuthRoutes } from './oauth/oauth.routes.tsx';
import { mountRegisterPages } from './register/register.routes.tsx';
import { mountSignInPages } from './sign-in/sign-in.routes.tsx';

/**
 * The pages' static files. Under its hashed name a file never changes, so browsers keep it
 * for a year without asking; under its plain name it is revalidated by its ETag.
 */
function serveAsset(asset: Asset, immutable: boolean) {
  return (ctx: KoaContext) => {
    ctx.set('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.set('ETag', asset.etag);
    ctx.type = asset.type;
    if (ctx.get('if-none-match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    ctx.body = asset.body;
  };
}

/**
 * The server-rendered pages (docs/API.md, Pages), one folder per page concern, each with its
 * routes (`*.routes.tsx`) and views (`*.view.tsx`): `register/`, `sign-in/` (with the second
 * step and the forgotten password), `links/` (the pages e-mailed links open), `account/`
 * (with its `mfa/` and `identities/` cards), `oauth/` (a provider's sign-in: redirects), `admin/`
 * (the operator's console: `overview/`, `accounts/`, `inbox/`, `events/`, `audit/`, and `console/`, what they share), and
 * `kit/`, what they share. Every one calls the same procedures REST and tRPC call, through
 * `createCaller`, with the session cookie as the only credential; every POST is checked for
 * its origin and CSRF token first (kit/kit.tsx).
 */
export function mountPages(router: Router, deps: Deps): void {
  for (const asset of Object.values(pageAssets)) {
    router.get(asset.href, serveAsset(asset, true));
    router.get(asset.plainHref, serveAsset(asset, false));
  }
  const kit = createPageKit(deps);
  mountRegisterPages(router, kit);
  mountSignInPages(router, kit);
  mountTokenPages(router, kit);
  mountAccountPages(router, kit);
  mountOAuthRoutes(router, kit);
  mountAdminPages(router, kit);
}
