import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { ACCESS_TOKEN_TTL_RANGE, AUDIENCE, readAccessTokens } from './config.access-tokens.ts';
import { PROVIDER_NAME, readOAuthProviders } from './config.oauth.ts';
import { DevSecretsUnreadable, loadDevSecrets } from './lib/dev-secrets.ts';
import { parseBareEmail, TELEGRAM_SECRET_TOKEN } from './lib/text.ts';

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `30d`, `12h`, `15m`, `90s` or a bare number of seconds; `0` only where it turns a limit off. */
function parseDurationSeconds(text: string, options: { zeroIsOff?: boolean } = {}): number | undefined {
  const match = /^(\d+)\s*([smhd]?)$/.exec(text.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * DURATION_UNITS[match[2] || 's'];
  return seconds > 0 || (options.zeroIsOff && seconds === 0) ? seconds : undefined;
}

/** A 32-byte key given as 64 hex characters or as base64. */
function parseKey32(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  return bytes.length === 32 ? bytes : undefined;
}

const optionalText = z
  .string()
  .transform((value) => value.trim())
  .optional()
  .transform((value) => (value ? value : undefined));

const urlText = (protocols: string[]) =>
  z.string().refine((value) => {
    try {
      return protocols.includes(new URL(value).protocol);
    } catch {
      return false;
    }
  }, `must be a URL (${protocols.join(' or ')})`);

/**
 * The longest a duration may be. A session's is what a browser keeps a cookie at most (400
 * days); a timeout's is the longest a Node.js timer waits (a longer one fires at once).
 */
const MAX_SESSION = { seconds: 400 * 86_400, text: '400d' };
const MAX_TIMEOUT = { seconds: 24 * 86_400, text: '24d' };

const duration = (fallback: string, max: { seconds: number; text: string }) =>
  z
    .string()
    .default(fallback)
    .refine((value) => (parseDurationSeconds(value) ?? Infinity) <= max.seconds, `must be a duration like 30d, 12h, 15m or seconds, at most ${max.text}`);

const durationOrOff = (fallback: string, max: { seconds: number; text: string }) =>
  z
    .string()
    .default(fallback)
    .refine((value) => (parseDurationSeconds(value, { zeroIsOff: true }) ?? Infinity) <= max.seconds, `must be 0 (off) or a duration like 14d, 12h, 15m or seconds, at most ${max.text}`);

/** One message for every way a number can be wrong: not a number, a fraction, out of range. */
const wholeNumber = (min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return z.coerce.number({ error: message }).int({ error: message }).min(min, { error: message }).max(max, { error: message });
};

/**
 * MFA_REQUIRED_ROLES: unset, an operator's account needs a second factor in production (the
 * console and the operator API are the most valuable way in) and no role does elsewhere;
 * `none` turns it off anywhere.
 */
function mfaRequiredRoles(value: string, env: string): Array<'user' | 'admin'> {
  if (value.trim() === 'none') return [];
  if (value.trim() === '') return env === 'production' ? ['admin'] : [];
  return splitList(value) as Array<'user' | 'admin'>;
}

const splitList = (text: string) =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/** `scheme://host[:port]` of an http(s) URL, or undefined. */
function originOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** An IPv4 range in the four-part form (`10.20.0.0/16`) or an IPv6 one (`fd00::/8`). */
const isCidr = (text: string) => (text.includes(':') ? ipaddr.IPv6.isValidCIDR(text) : ipaddr.IPv4.isValidCIDRFourPartDecimal(text));

/** Outside production a developer's receiver on this machine works with no setting. */
const DEVELOPMENT_EVENT_NETWORKS = ['127.0.0.0/8', '::1/128'];
const LINK_LOCAL = [ipaddr.parse('169.254.169.254'), ipaddr.parse('fe80::1')];

/** Whether a listed range holds link-local addresses, which stay refused whatever the list says. */
const holdsLinkLocal = (cidr: string) => {
  const [network, bits] = ipaddr.parseCIDR(cidr);
  return network.range() === 'linkLocal' || LINK_LOCAL.some((address) => address.kind() === network.kind() && address.match(network, bits));
};

export const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: wholeNumber(0, 65535).default(3000),
  // Outside production a developer's machine keeps its generated secrets off the network;
  // the image and docker-compose.yml set 0.0.0.0 themselves.
  HOST: z.string().min(1).optional().meta({ defaultText: '`127.0.0.1` outside production, `0.0.0.0` in it' }),
  PUBLIC_URL: urlText(['http:', 'https:']).optional(),
  DATABASE_URL: urlText(['postgres:', 'postgresql:']).optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  SMTP_URL: urlText(['smtp:', 'smtps:']).optional(),
  MAIL_FROM: z.string().min(3).default('Gatehouse <no-reply@localhost>'),
  JWT_SECRET: z
    .string()
    .refine((value) => splitList(value).length > 0 && splitList(value).every((secret) => Buffer.byteLength(secret) >= 32), 'must be one or more comma-separated secrets of at least 32 bytes each')
    .optional(),
  JWT_TTL: duration('30d', MAX_SESSION),
  SESSION_IDLE_TIMEOUT: durationOrOff('14d', MAX_SESSION),
  DATA_KEY: z
    .string()
    .refine((value) => splitList(value).length > 0 && splitList(value).every((key) => parseKey32(key) !== undefined), 'must be one or more comma-separated keys of 32 bytes, each as 64 hex characters or base64')
    .optional(),
  BILLING_WEBHOOK_SECRET: optionalText,
  BILLING_PLANS: z
    .string()
    .default('')
    .refine(
      (value) => value.split(',').every((pair) => !pair.trim() || /^[^=\s]+=[^=\s]+$/.test(pair.trim())),
      'must be a comma-separated list of priceId=plan',
    ),
  OPERATOR_BOT_TOKEN: optionalText,
  // Telegram's setWebhook refuses any other secret_token, and no delivery could match it.
  OPERATOR_BOT_SECRET: optionalText.refine((value) => value === undefined || TELEGRAM_SECRET_TOKEN.test(value), 'must be 1 to 256 of A-Z, a-z, 0-9, _ and - (what Telegram takes as a secret_token)'),
  TELEGRAM_API_URL: urlText(['http:', 'https:']).default('https://api.telegram.org'),
  RATE_LIMITS: z.enum(['on', 'off']).default('on'),
  MFA_REQUIRED_ROLES: z
    .string()
    .default('')
    .refine((value) => value.trim() === 'none' || splitList(value).every((role) => role === 'user' || role === 'admin'), 'must be a comma-separated list of roles (user, admin), or none')
    .meta({ defaultText: '`admin` in production, none outside it' }),
  ADMIN_EMAILS: z
    .string()
    .default('')
    .refine((value) => splitList(value).every((address) => parseBareEmail(address) !== undefined), 'must be a comma-separated list of bare e-mail addresses (local@domain)'),
  BREACHED_PASSWORD_CHECK: z.enum(['off', 'hibp']).default('off'),
  HIBP_API_URL: urlText(['http:', 'https:']).default('https://api.pwnedpasswords.com'),
  AUTH_CACHE: z.enum(['on', 'off']).default('on'),
  FAST_PATHS: z.enum(['on', 'off']).default('on'),
  TRUST_PROXY: z
    .string()
    .default('off')
    .refine((value) => value === 'off' || /^(?:[1-9]|10)$/.test(value), 'must be off or the number of proxies in front (1 to 10)'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  CORS_ORIGINS: z
    .string()
    .default('')
    .refine((value) => splitList(value).every((origin) => originOf(origin) === origin.replace(/\/$/, '').toLowerCase()), 'must be a comma-separated list of origins like https://app.example.com'),
  REQUEST_TIMEOUT: duration('30s', MAX_TIMEOUT),
  HEADERS_TIMEOUT: duration('10s', MAX_TIMEOUT),
  MAX_CONNECTIONS: wholeNumber(1, 1_000_000).default(2048),
  AUDIT_RETENTION_DAYS: wholeNumber(1, 36_500).default(90),
  INBOX_RETENTION_DAYS: wholeNumber(1, 36_500).default(30),
  METRICS_TOKEN: z
    .string()
    .refine((value) => Buffer.byteLength(value) >= 16, 'must be at least 16 bytes')
    .optional(),
  ACCESS_LOG: z.enum(['on', 'off']).default('on'),
  SHUTDOWN_TIMEOUT: duration('25s', MAX_TIMEOUT),
  DATABASE_POOL_SIZE: wholeNumber(2, 1000).default(20),
  HEALTH_PORT: wholeNumber(0, 65535).optional(),
  // A scrape target needs a port known in advance: 0 (any free port) would be none.
  WORKER_METRICS_PORT: wholeNumber(1, 65535).optional(),
  OAUTH_PROVIDERS: z
    .string()
    .default('')
    .refine((value) => splitList(value).every((name) => PROVIDER_NAME.test(name)), 'must be a comma-separated list of names of 1 to 32 characters a-z, 0-9 and -')
    .refine((value) => new Set(splitList(value)).size === splitList(value).length, 'must not name a provider twice'),
  OAUTH_GITHUB_AUTH_URL: urlText(['http:', 'https:']).default('https://github.com'),
  OAUTH_GITHUB_API_URL: urlText(['http:', 'https:']).default('https://api.github.com'),
  EVENTS_ALLOWED_NETWORKS: z
    .string()
    .refine((value) => value.trim() === 'none' || (splitList(value).length > 0 && splitList(value).every(isCidr)), 'must be none or a comma-separated list of ranges like 10.20.0.0/16 or fd00::/8')
    .optional(),
  ACCESS_TOKEN_AUDIENCES: z
    .string()
    .default('')
    .refine((value) => splitList(value).every((audience) => AUDIENCE.test(audience)), 'must be a comma-separated list of audiences, each 1 to 200 printable characters without spaces, like bookings or https://bookings.example.com'),
  ACCESS_TOKEN_TTL: z
    .string()
    .default('5m')
    .refine((value) => {
      const seconds = parseDurationSeconds(value) ?? 0;
      return seconds >= ACCESS_TOKEN_TTL_RANGE.min && seconds <= ACCESS_TOKEN_TTL_RANGE.max;
    }, 'must be a duration from 1m to 15m, like 5m or 300'),
  // Read by config.access-tokens.ts: a refusal names a key by its place, never quotes it.
  ACCESS_TOKEN_KEYS: optionalText,
});


export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/** The development secrets kept in DATA_DIR, or null (and an issue) when it cannot hold them. */
function devSecretsIn(dataDir: string, ctx: z.core.$RefinementCtx) {
  try {
    return loadDevSecrets(dataDir);
  } catch (error) {
    if (error instanceof DevSecretsUnreadable) {
      ctx.addIssue({ code: 'custom', path: ['DATA_DIR'], message: error.message });
      return null;
    }
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    ctx.addIssue({ code: 'custom', path: ['DATA_DIR'], message: `${dataDir} cannot hold the development secrets (${reason}); make it writable by this user, or set JWT_SECRET and DATA_KEY` });
    return null;
  }
}

/** The same key listed twice (hex and base64, say) is one key. */
function distinct(keys: Buffer[]): Buffer[] {
  return keys.filter((key, index) => keys.findIndex((other) => other.equals(key)) === index);
}

function parsePlans(text: string): Map<string, string> {
  const plans = new Map<string, string>();
  for (const pair of text.split(',')) {
    const [priceId, plan] = pair.trim().split('=');
    if (priceId && plan) plans.set(priceId, plan);
  }
  return plans;
}

/**
 * What the service reads, made from the checked environment: names, units and parsed values
 * instead of strings. A production start without what production needs, or a DATA_DIR that
 * cannot hold development secrets, is an issue of the schema like any other bad value.
 */
function toConfig(e: z.output<typeof envSchema> & Record<string, unknown>, ctx: z.core.$RefinementCtx) {
  if (e.NODE_ENV === 'production') {
    // The embedded database and mail written to the log are for trying Gatehouse out: in
    // production they would lose data or send no verification mail, silently.
    const missing = (['JWT_SECRET', 'DATA_KEY', 'PUBLIC_URL', 'DATABASE_URL', 'SMTP_URL'] as const).filter((name) => !e[name]);
    for (const name of missing) ctx.addIssue({ code: 'custom', path: [name], message: 'required when NODE_ENV=production' });
    if (missing.length) return z.NEVER;
  }
  const warnings: string[] = [];
  const devSecrets = !e.JWT_SECRET || !e.DATA_KEY ? devSecretsIn(e.DATA_DIR, ctx) : undefined;
  if (devSecrets === null) return z.NEVER;
  if (devSecrets) {
    const unset = [e.JWT_SECRET ? '' : 'JWT_SECRET', e.DATA_KEY ? '' : 'DATA_KEY'].filter(Boolean).join(' and ');
    warnings.push(`${unset} not set: using development secrets from ${devSecrets.file}; never do this in production`);
  }
  if (e.RATE_LIMITS === 'off') warnings.push('RATE_LIMITS=off: request rate limits are disabled');
  const eventsAllowedNetworks = e.EVENTS_ALLOWED_NETWORKS === undefined ? (e.NODE_ENV === 'production' ? [] : DEVELOPMENT_EVENT_NETWORKS) : e.EVENTS_ALLOWED_NETWORKS.trim() === 'none' ? [] : splitList(e.EVENTS_ALLOWED_NETWORKS);
  if (eventsAllowedNetworks.some(holdsLinkLocal)) warnings.push('EVENTS_ALLOWED_NETWORKS holds link-local addresses (169.254.0.0/16, fe80::/10): events never go there all the same');
  if (e.WORKER_METRICS_PORT !== undefined && !e.METRICS_TOKEN) warnings.push('WORKER_METRICS_PORT is set without METRICS_TOKEN: a worker-only process answers /metrics there with 404');
  const oauthProviders = readOAuthProviders(
    e,
    { names: splitList(e.OAUTH_PROVIDERS), production: e.NODE_ENV === 'production', githubAuthUrl: e.OAUTH_GITHUB_AUTH_URL, githubApiUrl: e.OAUTH_GITHUB_API_URL },
    ctx,
  );
  if (oauthProviders.length < splitList(e.OAUTH_PROVIDERS).length) return z.NEVER;
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  const accessTokens = readAccessTokens(
    {
      audiences: splitList(e.ACCESS_TOKEN_AUDIENCES),
      ttlSeconds: parseDurationSeconds(e.ACCESS_TOKEN_TTL)!,
      keysText: e.ACCESS_TOKEN_KEYS,
      production: e.NODE_ENV === 'production',
      dataDir: e.DATA_DIR,
      publicUrl,
    },
    ctx,
    warnings,
  );
  if (!accessTokens) return z.NEVER;
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST ?? (e.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1'),
    publicUrl,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    /** The first signs session tokens; every one verifies them (rotation without logging anyone out). */
    jwtSecrets: e.JWT_SECRET ? distinct(splitList(e.JWT_SECRET).map((secret) => Buffer.from(secret))) : [devSecrets!.jwtSecret],
    jwtTtlSeconds: parseDurationSeconds(e.JWT_TTL)!,
    /** A session unused for this long is ended, whatever its JWT says; 0: never (JWT_TTL alone). */
    sessionIdleTimeoutSeconds: parseDurationSeconds(e.SESSION_IDLE_TIMEOUT, { zeroIsOff: true })!,
    /** The first seals secrets at rest and keys the lookup hashes; every one opens and looks up. */
    dataKeys: e.DATA_KEY ? distinct(splitList(e.DATA_KEY).map((key) => parseKey32(key)!)) : [devSecrets!.dataKey],
    billingWebhookSecrets: (e.BILLING_WEBHOOK_SECRET ?? '')
      .split(',')
      .map((secret) => secret.trim())
      .filter(Boolean),
    billingPlans: parsePlans(e.BILLING_PLANS),
    operatorBotToken: e.OPERATOR_BOT_TOKEN,
    operatorBotSecret: e.OPERATOR_BOT_SECRET,
    telegramApiUrl: e.TELEGRAM_API_URL.replace(/\/+$/, ''),
    rateLimits: e.RATE_LIMITS === 'on',
    /** Accounts of these roles must have a second factor before they may do more than set one up. */
    mfaRequiredRoles: mfaRequiredRoles(e.MFA_REQUIRED_ROLES, e.NODE_ENV),
    /**
     * Addresses, normalised as account addresses are, whose account becomes an admin when
     * this service's own mailed link verifies the address; once per address.
     */
    adminEmails: [...new Set(splitList(e.ADMIN_EMAILS).map((address) => parseBareEmail(address)!))],
    /** `hibp`: a new password is also looked up in the breach range API at hibpApiUrl. */
    breachedPasswordCheck: e.BREACHED_PASSWORD_CHECK,
    hibpApiUrl: e.HIBP_API_URL.replace(/\/+$/, ''),
    /**
     * Answer repeat /me callers from memory, kept exact by LISTEN/NOTIFY. Needs a direct
     * connection or a session-mode pooler: behind a transaction-mode pooler, turn it off.
     */
    authCache: e.AUTH_CACHE === 'on',
    /**
     * The fast paths of gateway/src/fast-paths/ (the REST handler). Off: the library's own
     * handler, as a reference to compare with.
     */
    fastPaths: e.FAST_PATHS === 'on',
    /**
     * How many reverse proxies in front append to X-Forwarded-For; 0 trusts none. The client
     * address (per-IP rate limits) is the entry that many places from the end, so entries a
     * client writes itself further left are never believed.
     */
    trustedProxies: e.TRUST_PROXY === 'off' ? 0 : Number(e.TRUST_PROXY),
    logLevel: e.LOG_LEVEL,
    /**
     * Origins trusted besides PUBLIC_URL's own: cookie-authenticated writes from them are
     * allowed (docs/API.md, Credentials), and CORS answers them.
     */
    corsOrigins: splitList(e.CORS_ORIGINS).map((origin) => originOf(origin)!),
    /** The longest a request may take to arrive, and its headers; Node would allow 300 s and 60 s. */
    requestTimeoutMs: parseDurationSeconds(e.REQUEST_TIMEOUT)! * 1000,
    headersTimeoutMs: Math.min(parseDurationSeconds(e.HEADERS_TIMEOUT)!, parseDurationSeconds(e.REQUEST_TIMEOUT)!) * 1000,
    /** Open connections one process accepts; more are closed at once. */
    maxConnections: e.MAX_CONNECTIONS,
    /** Activity log entries older than this are purged by the worker. */
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    /** Processed and ignored webhook deliveries older than this are purged by the worker. */
    inboxRetentionDays: e.INBOX_RETENTION_DAYS,
    /** Bearer token of GET /metrics; unset, the route is a 404. */
    metricsToken: e.METRICS_TOKEN,
    /** One info line per request (docs/OPERATIONS.md, Access log). */
    accessLog: e.ACCESS_LOG === 'on',
    /** How long a SIGTERM may take to drain before the process exits anyway. */
    shutdownTimeoutMs: parseDurationSeconds(e.SHUTDOWN_TIMEOUT)! * 1000,
    /** Connections each process keeps to a database server (the embedded one has one). */
    databasePoolSize: e.DATABASE_POOL_SIZE,
    /** A worker-only process answers /healthz and /readyz on this port, when set (containers). */
    healthPort: e.HEALTH_PORT,
    /**
     * Ranges events out may go to besides public addresses (receivers inside the operators'
     * network); link-local never, whatever this holds (modules/events/events.targets.ts).
     */
    eventsAllowedNetworks,
    /** A worker-only process answers /metrics (behind metricsToken), /healthz and /readyz on this port, when set. */
    workerMetricsPort: e.WORKER_METRICS_PORT,
    /** Identity providers people may sign in with, in OAUTH_PROVIDERS's order (config.oauth.ts). */
    oauthProviders,
    /** Access tokens for the platform's services: their audiences, lifetime and signing keys (config.access-tokens.ts). */
    accessTokens,
    /** Things worth a warning at start, e.g. generated development secrets. */
    warnings,
  };
}

// Loose: the identity providers' variables are named after them, so the schema cannot list them.
const configSchema = envSchema.loose().transform(toConfig);

/** The service's settings: what `toConfig` makes of the environment. */
export type Config = z.output<typeof configSchema>;

/** Reads and validates the environment once; every other module gets a Config. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, value]) => value !== '')));
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  return parsed.data;
}
