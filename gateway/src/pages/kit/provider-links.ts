import type { Context as KoaContext } from 'koa';
import type { PageKit } from './kit.tsx';
import type { ProviderLink } from './provider-links.view.tsx';

/** "Continue with {label}" for each identity provider, coming back to `next` after. */
export async function providerLinks(ctx: KoaContext, kit: PageKit, next?: string): Promise<ProviderLink[]> {
  const { providers } = await kit.call(ctx).auth.oauthProviders();
  return providers.map((provider) => ({ label: provider.label, href: next ? `${provider.start_url}?${new URLSearchParams({ next })}` : provider.start_url }));
}

