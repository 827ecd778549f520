import { availableParallelism } from 'node:os';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { createSecretBox, deriveKey, type SecretBox } from './lib/crypto.ts';
import { createDatabase, type Db } from './lib/db.ts';
import { createJwtSigner, type JwtSigner } from './lib/jwt.ts';
import { createLogger, type Logger } from './lib/logger.ts';
import { createMailer, type Mailer } from './lib/mailer.ts';
import { migrate } from './lib/migrator.ts';
import { createPasswordHasher, type PasswordHasher } from './lib/passwords.ts';
import { startQueue, type PgBoss } from './lib/queue.ts';
import { createRateLimiter, type RateLimiter } from './lib/rate-limiter.ts';
import { createAuthCache, type AuthCache } from './modules/auth/auth.cache.ts';

export type Deps = {
  config: Config;
  logger: Logger;
  clock: Clock;
  db: Db;
  mailer: Mailer;
  jwt: JwtSigner;
  passwords: PasswordHasher;
  rateLimiter: RateLimiter;
  secretBox: SecretBox;
  /** Key of the HMAC that API keys are looked up by. */
  apiKeyHashKey: Buffer;
  queue: PgBoss;
  /** Accounts and sessions recently authenticated; kept honest by NOTIFY (auth.cache.ts). */
  authCache: AuthCache;
  close(): Promise<void>;
};

export type DepsOverrides = Partial<Pick<Deps, 'logger' | 'clock'>> & {
  /** Supervise the job queue (maintenance, expiry): only the worker role needs it. */
  superviseQueue?: boolean;
  /** Cache authentication (one more connection, to LISTEN): only roles that serve requests need it. */
  authCache?: boolean;
};

/** The only place that builds connections and clients; everything else receives them. */
export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? systemClock;
  for (const warning of config.warnings) logger.warn(warning);
  const db = await createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger });
  try {
    await migrate(db, logger);
    const queue = await startQueue({ db, logger, supervise: overrides.superviseQueue ?? true });
    const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger });
    // Leave one core to the event loop: argon2 on every core starves request handling.
    const passwords = await createPasswordHasher({ concurrency: Math.max(1, availableParallelism() - 1) });
    const jwt = await createJwtSigner({ secret: config.jwtSecret, issuer: config.publicUrl, ttlSeconds: config.jwtTtlSeconds, clock });
    const useAuthCache = config.authCache && (overrides.authCache ?? true) && !db.embedded;
    const authCache = createAuthCache({ databaseUrl: useAuthCache ? config.databaseUrl : undefined, logger, clock });
    return {
      config,
      logger,
      clock,
      db,
      mailer,
      jwt,
      passwords,
      rateLimiter: createRateLimiter({ db, clock, enabled: config.rateLimits }),
      secretBox: createSecretBox(config.dataKey),
      apiKeyHashKey: deriveKey(config.dataKey, 'api-key-hash'),
      queue,
      authCache,
      async close() {
        await authCache.close();
        await queue.stop({ graceful: true, wait: true, timeout: 10_000 }).catch((error) => logger.warn({ err: error }, 'queue stop failed'));
        await mailer.close();
        await db.close();
      },
    };
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}
