import { availableParallelism } from 'node:os';
import type { Config } from './config.ts';
import { createAccessTokenSigner, type AccessTokenSigner } from './lib/access-tokens.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { createSecretBox, deriveKey, type SecretBox } from './lib/crypto.ts';
import { createDatabase, type Db } from './lib/db.ts';
import { createJwtSigner, type JwtSigner } from './lib/jwt.ts';
import { createLogger, stdoutLogDestination, type Logger } from './lib/logger.ts';
import { createMailer, type Mailer } from './lib/mailer.ts';
import { createOAuthClients, type OAuthClients } from './lib/oauth-clients.ts';
import { createPasswordHasher, type PasswordCost, type PasswordHasher } from './lib/passwords.ts';
import { startQueue, type PgBoss } from './lib/queue.ts';
import { createRateLimiter, type RateLimiter } from './lib/rate-limiter.ts';
import { createSystemResolver, type Resolver } from './lib/resolver.ts';
import { createSignal, type Signal } from './lib/signal.ts';
import { QUEUE_POLICIES } from './jobs.ts';
import { migrate } from './migrations/index.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { createGroupedTtlCache, type GroupedTtlCache } from './lib/ttl-cache.ts';
import { accountIdOfNotice, createAccountNotices, type AccountNotices } from './lib/account-notices.ts';

export type Deps = {
  config: Config;
  logger: Logger;
  clock: Clock;
  db: Db;
  mailer: Mailer;
  jwt: JwtSigner;
  /** Signs the access tokens of the platform's services and publishes their keys (modules/tokens, the JWKS route). */
  accessTokens: AccessTokenSigner;
  passwords: PasswordHasher;
  rateLimiter: RateLimiter;
  secretBox: SecretBox;
  /** Keys of the HMAC that API keys are looked up by, one per DATA_KEY: the first writes. */
  apiKeyHashKeys: Buffer[];
  /** Keys of device cookies (sessions.issue.ts), one per DATA_KEY: the first signs. */
  deviceKeys: Buffer[];
  /** Signs the CSRF tokens of the pages' forms (gateway/src/pages); short-lived, so the first DATA_KEY's only. */
  formKey: Buffer;
  queue: PgBoss;
  /**
   * Changes to accounts' auth rows that other connections committed (LISTEN), for the copies
   * a process keeps: the sessions module's /me cache (sessions.cache.ts) and webhookSecrets.
   */
  accountNotices: AccountNotices;
  /**
   * What a module that keeps state of its own for these deps (the sessions' touch writer) must
   * finish on close: run first, while the database is still open.
   */
  onClose(finish: () => Promise<void>): void;
  /**
   * Decrypted site and channel webhook secrets, by account, so a burst of deliveries costs one
   * lookup: a change to the account (its deletion) evicts them here and, by NOTIFY, everywhere.
   */
  webhookSecrets: GroupedTtlCache<WebhookSecret>;
  /** Prometheus metrics of this process, served at GET /metrics (metrics.ts). */
  metrics: Metrics;
  /** A client per identity provider of OAUTH_PROVIDERS (modules/identities). */
  oauthClients: OAuthClients;
  /**
   * Rung by the inbox writer when this process has committed new deliveries: a worker in the
   * same process (`npm start`) dispatches them at once instead of at its next poll.
   */
  inboxKept: Signal;
  /** Host names to addresses, for events out's check of where it sends (modules/events/events.targets.ts). */
  resolver: Resolver;
  close(): Promise<void>;
};

/** A site's or channel's webhook secret, with the account that owns it. */
export type WebhookSecret = { secret: unknown; accountId: number };

export type DepsOverrides = Partial<Pick<Deps, 'logger' | 'clock' | 'resolver'>> & {
  /** Supervise the job queue (maintenance, expiry): only the worker role needs it. */
  superviseQueue?: boolean;
  /** Cache authentication (one more connection, to LISTEN): only roles that serve requests need it. */
  authCache?: boolean;
  /**
   * argon2's cost, when not PASSWORD_COST. Only the test harness sets it, to make the
   * thousands of hashes of a test run cheap; no setting of the configuration reaches it.
   */
  passwordCost?: PasswordCost;
  /**
   * Runs once the database is open and migrated, before anything else starts (the queue, the
   * mailer, the LISTEN connection); what it throws stops createDeps, which closes the database.
   * openDeps (roles/open-deps.ts) checks here that DATA_KEY opens the secrets stored.
   */
  checkOpened?: (opened: { db: Db; secretBox: SecretBox; clock: Clock; logger: Logger }) => Promise<void>;
};

/** The only place that builds connections and clients; everything else receives them. */
export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const destination = overrides.logger ? undefined : stdoutLogDestination();
  const logger = overrides.logger ?? createLogger(config.logLevel, destination);
  const clock = overrides.clock ?? systemClock;
  for (const warning of config.warnings) logger.warn(warning);
  const metrics = createMetrics({ clock, logger });
  destination?.on('drop', () => metrics.countDroppedLogLine());
  const db = await createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: config.databasePoolSize, logger });
  try {
    const secretBox = createSecretBox(config.dataKeys);
    await migrate(db, logger, { secretBox, dataKeys: config.dataKeys });
    await overrides.checkOpened?.({ db, secretBox, clock, logger });
    const queue = await startQueue({ db, logger, supervise: overrides.superviseQueue ?? true, queues: QUEUE_POLICIES });
    const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger });
    // Leave one core to the event loop: argon2 on every core starves request handling.
    const passwords = await createPasswordHasher({ concurrency: Math.max(1, availableParallelism() - 1), cost: overrides.passwordCost });
    const jwt = await createJwtSigner({ secrets: config.jwtSecrets, issuer: config.publicUrl, audience: config.publicUrl, ttlSeconds: config.jwtTtlSeconds, clock });
    const accessTokens = await createAccessTokenSigner({ keys: config.accessTokens.keys, issuer: config.publicUrl, ttlSeconds: config.accessTokens.ttlSeconds, clock });
    // Off on the embedded database and with AUTH_CACHE=off: without a listener it is never up.
    const accountNotices = createAccountNotices({ databaseUrl: db.embedded ? undefined : config.databaseUrl, enabled: config.authCache && (overrides.authCache ?? true), logger });
    const webhookSecrets = createGroupedTtlCache<WebhookSecret>({ clock, ttlMs: 60_000, maxEntries: 10_000, groupOf: (entry) => entry.accountId });
    // Notices missed while the connection was down may have named changed secrets.
    accountNotices.subscribe({
      listening: () => webhookSecrets.clear(),
      lost: () => webhookSecrets.clear(),
      notified: (payload) => {
        const accountId = accountIdOfNotice(payload);
        if (accountId === undefined) webhookSecrets.clear();
        else webhookSecrets.evictGroup(accountId);
      },
    });
    const closing: Array<() => Promise<void>> = [];
    return {
      config,
      logger,
      clock,
      db,
      mailer,
      jwt,
      accessTokens,
      passwords,
      rateLimiter: createRateLimiter({ db, clock, enabled: config.rateLimits, onRefusal: metrics.countRateLimitRefusal }),
      secretBox,
      apiKeyHashKeys: config.dataKeys.map((key) => deriveKey(key, 'api-key-hash')),
      deviceKeys: config.dataKeys.map((key) => deriveKey(key, 'device-cookie')),
      formKey: deriveKey(config.dataKeys[0], 'page-forms'),
      queue,
      accountNotices,
      onClose: (finish) => void closing.push(finish),
      oauthClients: createOAuthClients(config.oauthProviders, logger),
      webhookSecrets,
      metrics,
      inboxKept: createSignal(),
      resolver: overrides.resolver ?? createSystemResolver(),
      async close() {
        await accountNotices.close();
        for (const finish of closing.splice(0)) await finish();
        await queue.stop({ graceful: true, wait: true, timeout: 10_000 }).catch((error) => logger.warn({ err: error }, 'queue stop failed'));
        await mailer.close();
        await passwords.close();
        await db.close();
      },
    };
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}
