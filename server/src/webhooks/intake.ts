import type { Deps } from '../deps.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../lib/logger.ts';
import { createInboxWriter } from './inbox.writer.ts';
import type { InboxDelivery, WebhookSource } from './inbox.ts';
import { verifyPaddle } from './paddle.ts';
import { createSecretCache } from './secret-cache.ts';
import { PayloadError, SignatureError, type WebhookHeaders } from './signature.ts';
import { verifyStripe } from './stripe.ts';
import { verifyTelegram } from './telegram.ts';
import { verifyViber } from './viber.ts';
import { isUuid } from '../lib/text.ts';

/** Checks the exact bytes against the endpoint's secret and names the delivery for dedupe. */
type Verify = (raw: Buffer, headers: WebhookHeaders) => InboxDelivery;

export type WebhookIntake = {
  /**
   * Looks up the secret, verifies, and keeps the delivery durably. Throws AppError for
   * what the provider should hear (404, 401, 400, 503 when unconfigured); any other error
   * means the database could not be reached or written.
   */
  receive(source: WebhookSource, scope: string, raw: Buffer, headers: WebhookHeaders, log: Logger): Promise<{ duplicate: boolean }>;
};

const SITE_SECRET = { name: 'webhook_site_secret', text: 'SELECT secret_sealed FROM sites WHERE site_key = $1' };
const CHANNEL_SECRET = {
  name: 'webhook_channel_secret',
  text: 'SELECT platform, bot_token_sealed, secret_sealed FROM channels WHERE id = $1',
};

type ChannelRow = { platform: string; bot_token_sealed: string; secret_sealed: string | null };

export function createWebhookIntake(deps: Deps): WebhookIntake {
  const writer = createInboxWriter(deps);
  const cacheOptions = { ttlMs: 60_000, maxEntries: 10_000 };
  const siteSecrets = createSecretCache<string>(cacheOptions);
  const channelSecrets = createSecretCache<string>(cacheOptions);
  const { config, clock } = deps;

  async function siteSecret(siteKey: string): Promise<string> {
    const secret = await siteSecrets.get(siteKey, async () => {
      const [site] = await deps.db.query<{ secret_sealed: string }>(SITE_SECRET, [siteKey]);
      return site && deps.secretBox.open(site.secret_sealed);
    });
    if (secret === undefined) throw new AppError('NOT_FOUND', 'No such site.');
    return secret;
  }

  /** The channel's verification secret: the secret token for messengerone, the bot token for messengertwo. */
  async function channelSecret(platform: 'messengerone' | 'messengertwo', channelId: string): Promise<string> {
    // Anything but a UUID cannot exist, and must not reach the uuid column as a cast error.
    const secret = !isUuid(channelId)
      ? undefined
      : await channelSecrets.get(`${platform}:${channelId.toLowerCase()}`, async () => {
          const [channel] = await deps.db.query<ChannelRow>(CHANNEL_SECRET, [channelId]);
          if (!channel || channel.platform !== platform) return undefined;
          const sealed = platform === 'messengerone' ? channel.secret_sealed : channel.bot_token_sealed;
          return sealed ? deps.secretBox.open(sealed) : undefined;
        });
    if (secret === undefined) throw new AppError('NOT_FOUND', 'No such channel.');
    return secret;
  }

  const prepare: Record<WebhookSource, (scope: string) => Promise<Verify>> = {
    async billing() {
      const secrets = config.billingWebhookSecrets;
      if (!secrets.length) throw new AppError('SERVICE_UNAVAILABLE', 'BILLING_WEBHOOK_SECRET is not set.');
      return (raw, headers) => {
        const event = verifyPaddle(raw, headers, secrets, clock.now());
        return { source: 'billing', scope: '', externalId: event.eventId, payload: raw };
      };
    },
    async payment(siteKey) {
      const secret = await siteSecret(siteKey);
      return (raw, headers) => {
        const event = verifyStripe(raw, headers, secret, clock.now());
        return { source: 'payment', scope: siteKey, externalId: event.id, payload: raw };
      };
    },
    async operator() {
      const secret = config.operatorBotSecret;
      if (!secret) throw new AppError('SERVICE_UNAVAILABLE', 'OPERATOR_BOT_SECRET is not set.');
      return (raw, headers) => {
        const update = verifyTelegram(raw, headers, secret);
        return { source: 'operator', scope: '', externalId: String(update.updateId), payload: raw };
      };
    },
    async messengerone(channelId) {
      const secret = await channelSecret('messengerone', channelId);
      const scope = channelId.toLowerCase();
      return (raw, headers) => {
        const update = verifyTelegram(raw, headers, secret);
        return { source: 'messengerone', scope, externalId: String(update.updateId), payload: raw };
      };
    },
    async messengertwo(channelId) {
      const secret = await channelSecret('messengertwo', channelId);
      const scope = channelId.toLowerCase();
      return (raw, headers) => {
        const event = verifyViber(raw, headers, secret);
        return { source: 'messengertwo', scope, externalId: event.eventId, payload: raw };
      };
    },
  };

  return {
    async receive(source, scope, raw, headers, log) {
      const verify = await prepare[source](scope);
      let delivery: InboxDelivery;
      try {
        delivery = verify(raw, headers);
      } catch (error) {
        throw rejection(error, source, log);
      }
      return writer.write(delivery);
    },
  };
}

/** Only the reason is logged: never the presented signature, the secret or the body. */
function rejection(error: unknown, source: WebhookSource, log: Logger): unknown {
  if (error instanceof SignatureError) {
    log.info({ source, reason: error.reason }, 'webhook signature rejected');
    return new AppError('INVALID_SIGNATURE');
  }
  if (error instanceof PayloadError) {
    log.info({ source, problem: error.message }, 'webhook payload rejected');
    return new AppError('INVALID_PAYLOAD', error.message);
  }
  return error;
}
