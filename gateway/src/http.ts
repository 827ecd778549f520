import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context as KoaContext, Next } from 'koa';
import { AppError, errorBody, type ErrorCode } from '../../server/src/errors.ts';
import type { Logger } from '../../server/src/lib/logger.ts';

export type GatewayState = { requestId: string; logger: Logger };

const REQUEST_ID_PATTERN = /^[\w.-]{1,64}$/;

/** A request id (the caller's, if it looks sane), echoed back and on every log line. */
export function requestContext(logger: Logger) {
  return async (ctx: KoaContext, next: Next) => {
    const offered = ctx.get('x-request-id');
    const requestId = REQUEST_ID_PATTERN.test(offered) ? offered : randomUUID();
    ctx.state.requestId = requestId;
    // A child logger costs a redaction pass over its bindings; it is made on first use, which
    // above debug level is only when something goes wrong.
    let child: Logger | undefined;
    Object.defineProperty(ctx.state, 'logger', { get: () => (child ??= logger.child({ requestId })), enumerable: true });
    ctx.set('X-Request-Id', requestId);
    // Taken now: routes may rewrite the URL and method they hand to an adapter.
    const { method, path } = ctx;
    const started = performance.now();
    try {
      await next();
    } finally {
      // Only method, path and status: query strings and headers may carry tokens.
      const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
      const ms = Math.round((performance.now() - started) * 10) / 10;
      const line = { method, path, status, ms };
      if (status >= 500) ctx.state.logger.error(line, 'request');
      else if (logger.isLevelEnabled('debug')) ctx.state.logger.debug(line, 'request');
    }
  };
}

export function sendError(ctx: KoaContext, error: AppError): void {
  ctx.status = error.status;
  ctx.body = errorBody(error.code, error.message, error.extra.issues);
  if (error.extra.retryAfterSeconds) ctx.set('Retry-After', String(error.extra.retryAfterSeconds));
  if (error.code === 'UNAUTHORIZED') ctx.set('WWW-Authenticate', 'Bearer');
}

/**
 * Reads off what is left of a body that was refused part-way (too large, say), as
 * body-parser does: a half-read, paused body stalls the kept-alive connection for the next
 * request, and closing instead resets it before the client has read the answer. A sender
 * that never stops is cut off by the server's requestTimeout.
 */
export async function discardUnreadBody(req: IncomingMessage): Promise<void> {
  if (req.readableEnded || req.destroyed) return;
  await new Promise<void>((resolve) => {
    req.once('end', resolve);
    req.once('close', resolve);
    req.once('error', resolve);
    req.resume();
  });
}

const CODE_BY_HTTP_ERROR: Record<number, ErrorCode> = {
  400: 'INVALID_JSON',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

/**
 * Everything thrown inside the gateway ends here as the contract's error body. Errors from
 * body parsers (http-errors with `status`/`expose`) keep their 4xx; anything else is a 500
 * whose detail goes only to the log.
 */
export function errorHandler() {
  return async (ctx: KoaContext, next: Next) => {
    try {
      await next();
    } catch (error) {
      await discardUnreadBody(ctx.req);
      if (error instanceof AppError) return sendError(ctx, error);
      const status = (error as { status?: number; expose?: boolean }).status;
      const code = status ? CODE_BY_HTTP_ERROR[status] : undefined;
      if (code) return sendError(ctx, new AppError(code));
      (ctx.state.logger as Logger | undefined)?.error({ err: error }, 'unhandled error');
      sendError(ctx, new AppError('INTERNAL_ERROR'));
    }
  };
}

export function contentTypeOf(ctx: KoaContext): { type: string; charset?: string } {
  const header = ctx.get('content-type');
  const [type = '', ...params] = header.split(';').map((part) => part.trim());
  const charset = params.find((p) => p.toLowerCase().startsWith('charset='))?.slice(8).replace(/"/g, '').toLowerCase();
  return { type: type.toLowerCase(), charset };
}

export function hasBody(ctx: KoaContext): boolean {
  const length = ctx.get('content-length');
  return Boolean(ctx.get('transfer-encoding')) || (length !== '' && length !== '0');
}
