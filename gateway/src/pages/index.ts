import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import type { Deps } from '../../../server/src/index.ts';
import { pageAssets, type Asset } from '../pages/assets.ts';
import { mountAccountPages } from './pages/account.tsx';
import { createPageKit } from './pages/kit.tsx';
import { mountOAuthRoutes } from './pages/oauth.tsx';
import { mountPublicPages } from './pages/public.tsx';
import { mountTokenPages } from './pages/token-links.tsx';

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
 * The server-rendered pages (docs/API.md, Pages): register, sign in and out, the pages that
 * e-mailed links open, password reset, and the account page. Every one calls the same
 * procedures REST and tRPC call, through `createCaller`, with the session cookie as the only
 * credential; every POST is checked for its origin and CSRF token first (routes/pages/kit.tsx).
 */
export function mountPages(router: Router, deps: Deps): void {
  for (const asset of Object.values(pageAssets)) {
    router.get(asset.href, serveAsset(asset, true));
    router.get(asset.plainHref, serveAsset(asset, false));
  }
  const kit = createPageKit(deps);
  mountPublicPages(router, kit);
  mountTokenPages(router, kit);
  mountAccountPages(router, kit);
  mountOAuthRoutes(router, kit);
}
