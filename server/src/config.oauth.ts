import type { z } from 'zod';

/**
 * The identity providers people may sign in with (docs/CONFIGURATION.md, Identity providers).
 * Their variables are named after each provider (`OAUTH_ACME_CLIENT_ID`), so the schema
 * cannot list them: they are read here from the environment as given, once, at start.
 */

export const PROVIDER_NAME = /^[a-z0-9-]{1,32}$/;

/** Providers with a known issuer or protocol; every other name is an OpenID Connect issuer of its operator's. */
const GOOGLE_ISSUER = 'https://accounts.google.com';
const TRUSTED_BY_DEFAULT = new Set(['google', 'github']);
const MAX_LABEL = 64;

type Common = { name: string; label: string; clientId: string; clientSecret: string; trustEmail: boolean };
/** An OpenID Connect provider, found by discovery at its issuer. */
export type OidcProviderConfig = Common & { kind: 'oidc'; issuer: string };
/** GitHub: plain OAuth 2 at `authUrl`, the person's data from its REST API at `apiUrl`. */
export type GithubProviderConfig = Common & { kind: 'github'; authUrl: string; apiUrl: string };
export type OAuthProviderConfig = OidcProviderConfig | GithubProviderConfig;

/** `acme-corp` -> `OAUTH_ACME_CORP_`: the prefix of a provider's variables. */
export const providerPrefix = (name: string) => `OAUTH_${name.toUpperCase().replace(/-/g, '_')}_`;

const capitalised = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

function urlProblem(text: string, production: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be a URL (http: or https:)';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be a URL (http: or https:)';
  if (production && url.protocol === 'http:') return 'must be an https: URL when NODE_ENV=production';
  return undefined;
}

type Env = Record<string, unknown>;
type Settings = { names: string[]; production: boolean; githubAuthUrl: string; githubApiUrl: string };

const textOf = (env: Env, name: string) => (typeof env[name] === 'string' ? (env[name] as string).trim() || undefined : undefined);

/** One provider's settings, or undefined after adding an issue for each variable at fault. */
function readProvider(env: Env, name: string, settings: Settings, ctx: z.core.$RefinementCtx): OAuthProviderConfig | undefined {
  const prefix = providerPrefix(name);
  let problems = 0;
  const issue = (suffix: string, message: string) => {
    problems += 1;
    ctx.addIssue({ code: 'custom', path: [`${prefix}${suffix}`], message });
  };
  const clientId = textOf(env, `${prefix}CLIENT_ID`);
  const clientSecret = textOf(env, `${prefix}CLIENT_SECRET`);
  if (!clientId) issue('CLIENT_ID', `required: OAUTH_PROVIDERS lists ${name}`);
  if (!clientSecret) issue('CLIENT_SECRET', `required: OAUTH_PROVIDERS lists ${name}`);
  const label = textOf(env, `${prefix}LABEL`) ?? capitalised(name);
  if (label.length > MAX_LABEL) issue('LABEL', `must be at most ${MAX_LABEL} characters`);
  const trust = textOf(env, `${prefix}TRUST_EMAIL`);
  if (trust !== undefined && trust !== 'true' && trust !== 'false') issue('TRUST_EMAIL', 'must be true or false');
  const trustEmail = trust === undefined ? TRUSTED_BY_DEFAULT.has(name) : trust === 'true';
  const common = { name, label, clientId: clientId ?? '', clientSecret: clientSecret ?? '', trustEmail };
  if (name === 'github') {
    // The schema checked their form; production also wants them over https, like an issuer.
    for (const [suffix, url] of [['AUTH_URL', settings.githubAuthUrl], ['API_URL', settings.githubApiUrl]] as const) {
      const wrong = urlProblem(url, settings.production);
      if (wrong) issue(suffix, wrong);
    }
    return problems ? undefined : { ...common, kind: 'github', authUrl: settings.githubAuthUrl.replace(/\/+$/, ''), apiUrl: settings.githubApiUrl.replace(/\/+$/, '') };
  }
  const issuer = textOf(env, `${prefix}ISSUER`) ?? (name === 'google' ? GOOGLE_ISSUER : undefined);
  if (!issuer) issue('ISSUER', `required for the OpenID Connect provider ${name} (its issuer URL)`);
  else {
    const wrong = urlProblem(issuer, settings.production);
    if (wrong) issue('ISSUER', wrong);
  }
  // As given: discovery compares it with the issuer the provider names, trailing slash included (Auth0 has one).
  return problems ? undefined : { ...common, kind: 'oidc', issuer: issuer! };
}

/** Every provider OAUTH_PROVIDERS lists, in its order; issues name each variable at fault. */
export function readOAuthProviders(env: Env, settings: Settings, ctx: z.core.$RefinementCtx): OAuthProviderConfig[] {
  return settings.names.map((name) => readProvider(env, name, settings, ctx)).filter((provider): provider is OAuthProviderConfig => provider !== undefined);
}
