import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import getRawBody from 'raw-body';
import type { Deps } from '../../../server/src/deps.ts';
import { AppError } from '../../../server/src/errors.ts';
import type { Logger } from '../../../server/src/lib/logger.ts';
import type { WebhookSource } from '../../../server/src/webhooks/inbox.ts';
import { createWebhookIntake } from '../../../server/src/webhooks/intake.ts';

export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/**
 * Raw-body webhook endpoints (contract section 5). No body parser runs before these: the
 * signature is checked over the exact bytes, and only a verified delivery is parsed.
 */
export function mountWebhooks(router: Router, deps: Deps): void {
  const intake = createWebhookIntake(deps);

  const endpoint = (source: WebhookSource, scopeParam?: string) => async (ctx: KoaContext) => {
    const log = ctx.state.logger as Logger;
    const raw = await readRawBody(ctx);
    const scope = scopeParam ? String(ctx.params[scopeParam]) : '';
    try {
      await intake.receive(source, scope, raw, ctx.req.headers, log);
    } catch (error) {
      if (error instanceof AppError) throw error;
      // The provider retries on a 503; a 500 would read as "our bug" and some give up sooner.
      log.error({ err: error, source }, 'webhook could not be stored');
      throw new AppError('SERVICE_UNAVAILABLE');
    }
    // Telegram treats a JSON answer with `method` as a Bot API call; this one has none.
    ctx.status = 200;
    ctx.body = { ok: true };
  };

  router.post('/billingprovider/webhook', endpoint('billing'));
  router.post('/webhook/payment/:siteKey', endpoint('payment', 'siteKey'));
  router.post('/messengerone/webhook', endpoint('operator'));
  router.post('/messengerone/bot/:channelId', endpoint('messengerone', 'channelId'));
  router.post('/messengertwo/bot/:channelId', endpoint('messengertwo', 'channelId'));
}

/** The body as bytes, at most 1 MiB: refused up front by Content-Length, or while streaming. */
async function readRawBody(ctx: KoaContext): Promise<Buffer> {
  const declared = ctx.get('content-length');
  if (declared && Number(declared) > WEBHOOK_BODY_LIMIT) throw new AppError('PAYLOAD_TOO_LARGE');
  try {
    return await getRawBody(ctx.req, { limit: WEBHOOK_BODY_LIMIT, length: declared || undefined });
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 413) {
      // The rest of an oversized stream is not worth reading: end the connection instead.
      ctx.set('Connection', 'close');
      throw new AppError('PAYLOAD_TOO_LARGE');
    }
    if (status && status < 500) throw new AppError('INVALID_PAYLOAD', 'The request body could not be read.');
    throw error;
  }
}
