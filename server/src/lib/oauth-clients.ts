import * as oidc from 'openid-client';
import type { Logger } from './logger.ts';

/** What a client needs of a provider's settings (config.oauth.ts has the whole of them). */
export type OAuthClientSettings = { name: string; clientId: string; clientSecret: string } & (
  | { kind: 'oidc'; issuer: string }
  | { kind: 'github'; authUrl: string; apiUrl: string }
);

export type OAuthClients = {
  /** The provider's client: discovered at start, or now when that failed; throws while it cannot be reached. */
  configuration(name: string): Promise<oidc.Configuration>;
};

const DISCOVERY_TIMEOUT_SECONDS = 10;

/**
 * The spec's default is client_secret_basic; a provider that lists only client_secret_post
 * (some do) gets the secret in the body instead. Decided per request from its metadata.
 */
function clientSecretAuth(secret: string): oidc.ClientAuth {
  const basic = oidc.ClientSecretBasic(secret);
  const post = oidc.ClientSecretPost(secret);
  return (server, client, body, headers) => {
    const methods = server.token_endpoint_auth_methods_supported;
    const usePost = Array.isArray(methods) && methods.includes('client_secret_post') && !methods.includes('client_secret_basic');
    return (usePost ? post : basic)(server, client, body, headers);
  };
}

/** An http: endpoint is refused by the library unless allowed: config.ts allows one only outside production. */
const insecure = (url: string) => url.startsWith('http:');

/**
 * The library checks an ID token's iss, aud, exp and nonce, but its signature only when asked
 * (OpenID Connect lets a client trust TLS to the token endpoint instead): without
 * enableNonRepudiationChecks, a token signed by a key the issuer's JWKS does not hold passes.
 */
async function discover(settings: Extract<OAuthClientSettings, { kind: 'oidc' }>): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(settings.issuer), settings.clientId, undefined, clientSecretAuth(settings.clientSecret), {
    timeout: DISCOVERY_TIMEOUT_SECONDS,
    execute: [...(insecure(settings.issuer) ? [oidc.allowInsecureRequests] : []), oidc.enableNonRepudiationChecks],
  });
}

/** GitHub is not OpenID Connect: its two OAuth endpoints are known, and there is nothing to discover. */
function githubConfiguration(settings: Extract<OAuthClientSettings, { kind: 'github' }>): oidc.Configuration {
  const configuration = new oidc.Configuration(
    {
      issuer: settings.authUrl,
      authorization_endpoint: `${settings.authUrl}/login/oauth/authorize`,
      token_endpoint: `${settings.authUrl}/login/oauth/access_token`,
    },
    settings.clientId,
    undefined,
    oidc.ClientSecretPost(settings.clientSecret),
  );
  if (insecure(settings.authUrl) || insecure(settings.apiUrl)) oidc.allowInsecureRequests(configuration);
  return configuration;
}

/**
 * One client per provider. OpenID Connect discovery starts at once; a provider that cannot
 * be reached then is logged (its name and why, never its secret) and asked again at its
 * first use, so an outage of one provider neither stops the start nor lasts past its end.
 */
export function createOAuthClients(providers: OAuthClientSettings[], logger: Logger): OAuthClients {
  const known = new Map(providers.map((settings) => [settings.name, settings]));
  const found = new Map<string, Promise<oidc.Configuration | undefined>>();
  const start = (settings: Extract<OAuthClientSettings, { kind: 'oidc' }>) => {
    const attempt = discover(settings).catch((error: unknown) => {
      logger.warn({ provider: settings.name, issuer: settings.issuer, reason: error instanceof Error ? error.message : String(error) }, 'identity provider discovery failed; it is tried again at its next use');
      found.delete(settings.name);
      return undefined;
    });
    found.set(settings.name, attempt);
    return attempt;
  };
  for (const settings of providers) {
    if (settings.kind === 'oidc') void start(settings);
    else found.set(settings.name, Promise.resolve(githubConfiguration(settings)));
  }
  return {
    async configuration(name) {
      const settings = known.get(name);
      if (!settings) throw new Error(`no identity provider named ${name}`);
      const configuration = (await found.get(name)) ?? (settings.kind === 'oidc' ? await start(settings) : undefined);
      if (!configuration) throw new Error(`identity provider ${name} cannot be reached`);
      return configuration;
    },
  };
}
