import type { z } from 'zod';
import { DevSigningKeyUnreadable, loadDevSigningKey } from './lib/dev-secrets.ts';
import { parseSigningKeys, type SigningKey } from './lib/signing-keys.ts';

/**
 * Access tokens for the platform's services (docs/ACCESS-TOKENS.md): who may be named as an
 * audience, how long a token lives, and the keys that sign them (the first) and that the
 * JWKS publishes (every one).
 */
export type AccessTokensConfig = { audiences: string[]; ttlSeconds: number; keys: SigningKey[] };

/** An audience: printable ASCII without spaces or commas (the list's separator), like `bookings` or a URL. */
export const AUDIENCE = /^[\x21-\x2b\x2d-\x7e]{1,200}$/;

/** The most and least an access token may live: short, as nothing revokes it, and long enough to be worth caching. */
export const ACCESS_TOKEN_TTL_RANGE = { min: 60, max: 15 * 60 };

type Settings = { audiences: string[]; ttlSeconds: number; keysText?: string; production: boolean; dataDir: string; publicUrl: string };

const issue = (ctx: z.core.$RefinementCtx, path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });

/**
 * The settings, or undefined after adding an issue for each variable at fault. Outside
 * production a service with audiences and no ACCESS_TOKEN_KEYS signs with a key of its own
 * kept in DATA_DIR (`warnings` says so); production must be given its keys.
 */
export function readAccessTokens(settings: Settings, ctx: z.core.$RefinementCtx, warnings: string[]): AccessTokensConfig | undefined {
  const audiences = [...new Set(settings.audiences)];
  // A token for PUBLIC_URL would name this service itself, the session tokens' audience.
  if (audiences.some((audience) => audience.replace(/\/+$/, '') === settings.publicUrl)) {
    issue(ctx, 'ACCESS_TOKEN_AUDIENCES', 'must not name PUBLIC_URL: it is the audience of the session tokens, never of an access token');
    return undefined;
  }
  const base = { audiences, ttlSeconds: settings.ttlSeconds };
  if (settings.keysText !== undefined) {
    const parsed = parseSigningKeys(settings.keysText);
    if ('problem' in parsed) {
      issue(ctx, 'ACCESS_TOKEN_KEYS', parsed.problem);
      return undefined;
    }
    return { ...base, keys: parsed.keys };
  }
  if (!audiences.length) return { ...base, keys: [] };
  if (settings.production) {
    issue(ctx, 'ACCESS_TOKEN_KEYS', 'required when NODE_ENV=production and ACCESS_TOKEN_AUDIENCES is set (npm run admin -- tokens keygen makes one)');
    return undefined;
  }
  try {
    const { file, key } = loadDevSigningKey(settings.dataDir);
    warnings.push(`ACCESS_TOKEN_KEYS not set: access tokens are signed with a development key from ${file}; never do this in production`);
    return { ...base, keys: [key] };
  } catch (error) {
    const reason = error instanceof DevSigningKeyUnreadable ? error.message : `${settings.dataDir} cannot hold the development access-token key (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); set ACCESS_TOKEN_KEYS`;
    issue(ctx, error instanceof DevSigningKeyUnreadable ? 'ACCESS_TOKEN_KEYS' : 'DATA_DIR', reason);
    return undefined;
  }
}
