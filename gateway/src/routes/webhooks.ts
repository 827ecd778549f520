import Router from '@koa/router';
import type Koa from 'koa';
import type { Context as KoaContext } from 'koa';
import { AppError, createWebhookIntake, isDatabaseUnavailable, PROVIDERS, type AnyWebhookProvider, type Deps, type Logger } from '../../../server/src/index.ts';
import { readLimitedBody } from '../http.ts';

const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/**
 * Raw-body webhook endpoints (docs/WEBHOOKS.md), one per provider of the registry. No body
 * parser runs before these: the signature is checked over the exact bytes, and only a
 * verified delivery is parsed.
 */
/** Stripe and Paddle retry on their own schedules; Telegram and Viber read it as a hint at most. */
const WEBHOOK_RETRY_AFTER_SECONDS = 5;

/**
 * Mounts the webhook routes on `router`, and returns a middleware that answers a delivery
 * before the router sees it: the router tries every route of the site in turn (REST, pages,
 * docs), which a profile of ingest put at a twentieth of the gateway's time. The middleware
 * is a router of the webhook routes alone, so a delivery is matched, its `:scope` decoded
 * and its `route` label set exactly as the full router does; anything else (another method:
 * the full router's 405) goes on to the full router.
 */
export function mountWebhooks(router: Router, deps: Deps): Koa.Middleware {
  const intake = createWebhookIntake(deps);

  const endpoint = (provider: AnyWebhookProvider) => async (ctx: KoaContext) => {
    // Made on first use (http.ts): only a refused or failed delivery logs anything.
    const log = () => ctx.state.logger as Logger;
    const raw = await readRawBody(ctx);
    try {
      await intake.receive(provider, String(ctx.params.scope ?? ''), raw, ctx.req.headers, log);
    } catch (error) {
      if (error instanceof AppError) throw error;
      // Whatever kept the delivery from being stored, the provider should retry: a 503 with
      // Retry-After says so, where a 500 reads as "our bug" and some providers give up sooner.
      // An outage of the database is not our bug either, and is logged as one once per request.
      log()[isDatabaseUnavailable(error) ? 'warn' : 'error']({ err: error, provider: provider.name }, 'webhook could not be stored');
      throw new AppError('SERVICE_UNAVAILABLE', undefined, { retryAfterSeconds: WEBHOOK_RETRY_AFTER_SECONDS });
    }
    // Telegram treats a JSON answer with `method` as a Bot API call; this one has none.
    ctx.status = 200;
    ctx.body = { ok: true };
  };

  const deliveries = new Router();
  for (const provider of PROVIDERS) {
    const answer = endpoint(provider);
    router.post(provider.route, answer);
    deliveries.post(provider.route, answer);
  }
  const answerDelivery = deliveries.routes();
  return (ctx, next) => (ctx.method === 'POST' ? answerDelivery(ctx as Parameters<typeof answerDelivery>[0], next) : next());
}

/** The body as bytes, at most 1 MiB: refused up front by Content-Length, or while streaming. */
async function readRawBody(ctx: KoaContext): Promise<Buffer> {
  try {
    return await readLimitedBody(ctx, WEBHOOK_BODY_LIMIT);
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (!(error instanceof AppError) && status && status < 500) throw new AppError('INVALID_PAYLOAD', 'The request body could not be read.');
    throw error;
  }
}
