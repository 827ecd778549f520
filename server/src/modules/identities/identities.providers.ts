import type { Config } from '../../config.ts';
import type { OAuthProviderConfig } from '../../config.oauth.ts';
import { AppError } from '../../errors/errors.ts';

// The providers of OAUTH_PROVIDERS as the routes name them. Pure: the face exports these.

const OAUTH_PATH = '/api/v1/auth/oauth';

/** A configured provider by its name; 404 NOT_FOUND for any other. */
export function providerNamed(config: Pick<Config, 'oauthProviders'>, name: string): OAuthProviderConfig {
  const provider = config.oauthProviders.find((candidate) => candidate.name === name);
  if (!provider) throw new AppError('NOT_FOUND', 'No such identity provider.');
  return provider;
}

/** The redirect URI every provider is given, exactly. */
export const callbackUrl = (config: Pick<Config, 'publicUrl'>, name: string) => `${config.publicUrl}${OAUTH_PATH}/${name}/callback`;

/** Where a sign-in with the provider starts; `next` brings the browser back to a page of this site. */
export function startUrl(config: Pick<Config, 'publicUrl'>, name: string, options: { next?: string; intent?: 'link'; ticket?: string } = {}): string {
  const query = new URLSearchParams();
  if (options.intent) query.set('intent', options.intent);
  if (options.ticket) query.set('ticket', options.ticket);
  if (options.next) query.set('next', options.next);
  const text = query.toString();
  return `${config.publicUrl}${OAUTH_PATH}/${name}/start${text ? `?${text}` : ''}`;
}

/** A provider's label, also for one no longer configured (its links stay listed). */
export const labelOf = (config: Pick<Config, 'oauthProviders'>, name: string) => config.oauthProviders.find((provider) => provider.name === name)?.label ?? name;
