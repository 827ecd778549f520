import { z } from 'zod';
import { loadDevSecrets } from './lib/dev-secrets.ts';

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `30d`, `12h`, `15m`, `90s` or a bare number of seconds. */
export function parseDurationSeconds(text: string): number | undefined {
  const match = /^(\d+)\s*([smhd]?)$/.exec(text.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * DURATION_UNITS[match[2] || 's'];
  return seconds > 0 ? seconds : undefined;
}

/** A 32-byte key given as 64 hex characters or as base64. */
export function parseKey32(text: string): Buffer | undefined {
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

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: urlText(['http:', 'https:']).optional(),
  DATABASE_URL: urlText(['postgres:', 'postgresql:']).optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  SMTP_URL: urlText(['smtp:', 'smtps:']).optional(),
  MAIL_FROM: z.string().min(3).default('Gatehouse <no-reply@localhost>'),
  JWT_SECRET: z
    .string()
    .refine((value) => Buffer.byteLength(value) >= 32, 'must be at least 32 bytes')
    .optional(),
  JWT_TTL: z
    .string()
    .default('30d')
    .refine((value) => parseDurationSeconds(value) !== undefined, 'must be a duration like 30d, 12h, 15m or seconds'),
  DATA_KEY: z
    .string()
    .refine((value) => parseKey32(value) !== undefined, 'must be 32 bytes as 64 hex characters or base64')
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
  OPERATOR_BOT_SECRET: optionalText,
  TELEGRAM_API_URL: urlText(['http:', 'https:']).default('https://api.telegram.org'),
  RATE_LIMITS: z.enum(['on', 'off']).default('on'),
  AUTH_CACHE: z.enum(['on', 'off']).default('on'),
  TRUST_PROXY: z
    .string()
    .default('off')
    .refine((value) => value === 'off' || /^(?:[1-9]|10)$/.test(value), 'must be off or the number of proxies in front (1 to 10)'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  smtpUrl: string | undefined;
  mailFrom: string;
  jwtSecret: Buffer;
  jwtTtlSeconds: number;
  dataKey: Buffer;
  billingWebhookSecrets: string[];
  billingPlans: Map<string, string>;
  operatorBotToken: string | undefined;
  operatorBotSecret: string | undefined;
  telegramApiUrl: string;
  rateLimits: boolean;
  /**
   * Answer repeat /me callers from memory, kept exact by LISTEN/NOTIFY. Needs a direct
   * connection or a session-mode pooler: behind a transaction-mode pooler, turn it off.
   */
  authCache: boolean;
  /**
   * How many reverse proxies in front append to X-Forwarded-For; 0 trusts none. The client
   * address (per-IP rate limits) is the entry that many places from the end, so entries a
   * client writes itself further left are never believed.
   */
  trustedProxies: number;
  logLevel: string;
  /** Things worth a warning at start, e.g. generated development secrets. */
  warnings: string[];
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

function parsePlans(text: string): Map<string, string> {
  const plans = new Map<string, string>();
  for (const pair of text.split(',')) {
    const [priceId, plan] = pair.trim().split('=');
    if (priceId && plan) plans.set(priceId, plan);
  }
  return plans;
}

/** Reads and validates the environment once; every other module gets a Config. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, value]) => value !== '')));
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  if (production) {
    const missing = (['JWT_SECRET', 'DATA_KEY', 'PUBLIC_URL'] as const).filter((name) => !e[name]);
    if (missing.length) throw new ConfigError(missing.map((name) => `${name}: required when NODE_ENV=production`));
  }
  const warnings: string[] = [];
  const needsDevSecrets = !e.JWT_SECRET || !e.DATA_KEY;
  const devSecrets = needsDevSecrets ? loadDevSecrets(e.DATA_DIR) : undefined;
  if (devSecrets) {
    warnings.push(`JWT_SECRET or DATA_KEY not set: using development secrets from ${devSecrets.file}; never do this in production`);
  }
  if (e.RATE_LIMITS === 'off') warnings.push('RATE_LIMITS=off: request rate limits are disabled');
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    publicUrl: (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    jwtSecret: e.JWT_SECRET ? Buffer.from(e.JWT_SECRET) : devSecrets!.jwtSecret,
    jwtTtlSeconds: parseDurationSeconds(e.JWT_TTL)!,
    dataKey: e.DATA_KEY ? parseKey32(e.DATA_KEY)! : devSecrets!.dataKey,
    billingWebhookSecrets: (e.BILLING_WEBHOOK_SECRET ?? '')
      .split(',')
      .map((secret) => secret.trim())
      .filter(Boolean),
    billingPlans: parsePlans(e.BILLING_PLANS),
    operatorBotToken: e.OPERATOR_BOT_TOKEN,
    operatorBotSecret: e.OPERATOR_BOT_SECRET,
    telegramApiUrl: e.TELEGRAM_API_URL.replace(/\/+$/, ''),
    rateLimits: e.RATE_LIMITS === 'on',
    authCache: e.AUTH_CACHE === 'on',
    trustedProxies: e.TRUST_PROXY === 'off' ? 0 : Number(e.TRUST_PROXY),
    logLevel: e.LOG_LEVEL,
    warnings,
  };
}
