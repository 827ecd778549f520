import type { Deps } from '../../deps.ts';
import { AppError, type ErrorCode } from '../../errors/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { AnyWebhookProvider } from '../provider.ts';
import { checkDeliveryId, PayloadError } from '../shared/payload.ts';
import { SignatureError, type WebhookHeaders } from '../shared/signature.ts';
import { createInboxWriter } from './writer.ts';

export type WebhookIntake = {
  /**
   * Looks up the secret, verifies, and keeps the delivery durably. Throws AppError for
   * what the provider should hear (404, 401, 400, 503 when unconfigured); any other error
   * means the database could not be reached or written. `log` gives the request's logger,
   * asked for only when a refusal is logged (a child logger costs a pass over its bindings).
   */
  receive(provider: AnyWebhookProvider, rawScope: string, raw: Buffer, headers: WebhookHeaders, log: () => Logger): Promise<{ duplicate: boolean }>;
};

export function createWebhookIntake(deps: Deps): WebhookIntake {
  const writer = createInboxWriter(deps);

  /**
   * The scope as kept and its secret; a scope that cannot exist, or has no secret, is a 404.
   * Decrypted site and channel secrets come from deps.webhookSecrets, so a burst of
   * deliveries does one lookup and one decryption; a change to a site, a channel or their
   * account evicts them (on every instance, by NOTIFY), and unknown scopes are not kept, so a
   * new site works at once. Without the notices (AUTH_CACHE=off, or the listener down) a
   * changed secret would go unseen here, so every delivery looks its secret up; the embedded
   * database has one process, which evicts its own changes.
   */
  async function secretFor(provider: AnyWebhookProvider, rawScope: string): Promise<{ scope: string; secret: unknown }> {
    if (!provider.scope) return { scope: '', secret: (await provider.secret(deps, ''))?.secret };
    const scope = provider.scope(rawScope);
    if (scope === undefined) throw new AppError('NOT_FOUND', provider.notFound);
    const load = async () => {
      const loaded = await provider.secret(deps, scope);
      return loaded && { secret: loaded.secret, accountId: loaded.accountId ?? 0 };
    };
    const cached = deps.db.embedded || deps.accountNotices.up;
    const found = cached ? await deps.webhookSecrets.getOrLoad(`${provider.name}:${scope}`, load) : await load();
    if (found === undefined) throw new AppError('NOT_FOUND', provider.notFound);
    return { scope, secret: found.secret };
  }

  async function keep(provider: AnyWebhookProvider, rawScope: string, raw: Buffer, headers: WebhookHeaders, log: () => Logger): Promise<{ duplicate: boolean }> {
    const { scope, secret } = await secretFor(provider, rawScope);
    let externalId: string;
    try {
      externalId = checkDeliveryId(provider.externalId(provider.verify(raw, headers, secret, deps.clock.now())));
    } catch (error) {
      throw rejection(error, provider, log);
    }
    return writer.write({ provider: provider.name, scope, externalId, payload: raw });
  }

  return {
    async receive(provider, rawScope, raw, headers, log) {
      try {
        const kept = await keep(provider, rawScope, raw, headers, log);
        deps.metrics.countWebhook(provider.name, kept.duplicate ? 'duplicate' : 'accepted');
        return kept;
      } catch (error) {
        if (isRefusal(error)) deps.metrics.countWebhook(provider.name, 'rejected');
        throw error;
      }
    },
  };
}

/**
 * What the sender got wrong: an unknown scope, a bad signature, a payload we cannot read. An
 * unconfigured provider (503) or a database failure is ours, not the delivery's: not counted.
 */
const REFUSALS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['NOT_FOUND', 'INVALID_SIGNATURE', 'INVALID_PAYLOAD']);

function isRefusal(error: unknown): boolean {
  return error instanceof AppError && REFUSALS.has(error.code);
}

/** Only the reason is logged: never the presented signature, the secret or the body. */
function rejection(error: unknown, provider: AnyWebhookProvider, log: () => Logger): unknown {
  if (error instanceof SignatureError) {
    log().info({ provider: provider.name, reason: error.reason }, 'webhook signature rejected');
    return new AppError('INVALID_SIGNATURE');
  }
  if (error instanceof PayloadError) {
    log().info({ provider: provider.name, problem: error.message }, 'webhook payload rejected');
    return new AppError('INVALID_PAYLOAD', error.message);
  }
  return error;
}
