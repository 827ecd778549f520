import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Context as KoaContext, Next } from 'koa';
import getRawBody from 'raw-body';
import { AppError, hasControlCharacter, toErrorResponse, tooLargeMessage, utf8Text, type Deps, type Logger, type RequestInfo } from '../../server/src/index.ts';

const REQUEST_ID_PATTERN = /^[\w.-]{1,64}$/;

/** The matched route's pattern ('/api/v1/auth/sessions/:id', '/trpc/:path'), never the path itself. */
function routeOf(ctx: KoaContext): string {
  // Set by @koa/router on the matched layer; nothing matched (a 404 or 405) has none.
  return (ctx as { routerPath?: string }).routerPath ?? 'unmatched';
}

/**
 * A request's `ctx.state`: its id, and a logger that names it. A child logger costs a
 * redaction pass over its bindings, so it is made on first use, which is only when something
 * goes wrong: the access log line names the request itself. A class, not an accessor defined
 * on Koa's state object: defining one per request cost more than the rest of requestContext.
 */
class RequestState {
  readonly requestId: string;
  readonly #parent: Logger;
  #child: Logger | undefined;

  constructor(parent: Logger, requestId: string) {
    this.#parent = parent;
    this.requestId = requestId;
  }

  get logger(): Logger {
    return (this.#child ??= this.#parent.child({ requestId: this.requestId }));
  }
}

/**
 * A request id (the caller's, if it looks sane), echoed back and on every log line; then, once
 * answered, the request in the metrics and the access log line.
 */
export function requestContext(deps: Pick<Deps, 'logger' | 'metrics' | 'config'>) {
  const { logger, metrics } = deps;
  const accessLog = deps.config.accessLog;
  // The request line's keys are all ours and none is a redacted path, so pino's redaction
  // pass (measured at two thirds of a line's cost) could change nothing in it: it is written
  // through a logger without one. Made once, never per request.
  const lineLogger = logger.child({}, { redact: { paths: [] } });
  return async (ctx: KoaContext, next: Next) => {
    const offered = ctx.get('x-request-id');
    const requestId = REQUEST_ID_PATTERN.test(offered) ? offered : randomUUID();
    ctx.state = new RequestState(logger, requestId);
    ctx.set('X-Request-Id', requestId);
    // Taken now: routes may rewrite the URL and method they hand to an adapter.
    const { method, path } = ctx;
    const started = performance.now();
    try {
      await next();
    } finally {
      const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
      const ms = performance.now() - started;
      const route = routeOf(ctx);
      metrics.observeRequest(route, method, status, ms / 1000);
      if (status >= 500 || accessLog) {
        // One object, one pino call. Never a query string or a header: they may carry tokens.
        // `path` (ctx.path, without the query) stays beside the pattern: it is how a line is
        // matched to the URL asked for, and what tests/ops.health.rest.test.ts reads.
        const accountId = (ctx.state.requestInfo as RequestInfo | undefined)?.accountId;
        const line = { requestId, method, route, path, status, ms: Math.round(ms * 10) / 10, accountId };
        if (status >= 500) lineLogger.error(line, 'request');
        else lineLogger.info(line, 'request');
      }
    }
  };
}

/** Bodies up to this size are read off after an early error answer; larger ones close the connection. */
const DISCARD_LIMIT = 64 * 1024;

/**
 * What to do with a body a route did not read (it refused the request first). A small one is
 * read off, as body-parser does: a half-read, paused body would stall the kept-alive
 * connection for the next request. Anything larger, of unknown length, or already refused as
 * too large is not read at all: the answer goes out at once with `Connection: close`, and
 * Node closes the socket after it, so a client cannot hold a connection by sending more.
 */
async function settleUnreadBody(ctx: KoaContext, tooLarge: boolean): Promise<void> {
  const req = ctx.req;
  if (req.readableEnded || req.destroyed || req.complete) return;
  const declared = ctx.get('content-length');
  if (tooLarge || !declared || Number(declared) > DISCARD_LIMIT) {
    ctx.set('Connection', 'close');
    return;
  }
  await new Promise<void>((resolve) => {
    req.once('end', resolve);
    req.once('close', resolve);
    req.once('error', resolve);
    req.resume();
  });
}

/**
 * A path with a control character (`%00` and the like) or broken percent-encoding is refused
 * before any route sees it: decoded, it would reach a database or a log as it is. So is a
 * header value with one: Node's parser already refuses C0 characters there, but reads the
 * bytes 0x80 to 0x9F as the C1 controls U+0080 to U+009F, which would be stored with a
 * session's user agent and shown on the account page. Where those bytes are part of UTF-8
 * text (a user agent in Japanese, a cookie another page of the domain set), the text is
 * what is checked, and what is kept (headerText).
 */
export function refuseControlCharacters() {
  return async (ctx: KoaContext, next: Next) => {
    const path = ctx.path;
    if (path.includes('%')) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(path);
      } catch {
        throw new AppError('VALIDATION_FAILED', 'The request path is not valid percent-encoding.');
      }
      if (hasControlCharacter(decoded)) throw new AppError('VALIDATION_FAILED', 'The request path holds a control character.');
    }
    const raw = ctx.req.rawHeaders;
    for (let i = 1; i < raw.length; i += 2) {
      // Bytes 0x80 to 0x9F are also the middle of UTF-8 text: refused only when they are not.
      if (hasControlCharacter(raw[i]) && hasControlCharacter(headerText(raw[i]))) throw new AppError('VALIDATION_FAILED', `The ${raw[i - 1]} header holds a control character.`);
    }
    return next();
  };
}

/** Codes of a write to a client that has gone (it hung up mid-answer): its doing, not a fault of ours. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED']);

/**
 * Koa's 'error' listener: what Koa could not turn into an answer (a failure after the head
 * was sent) is an error in the log, unless the client had hung up, which is said at info.
 */
export function logKoaErrors(app: Koa, logger: Logger): void {
  app.on('error', (error: NodeJS.ErrnoException) => {
    if (CLIENT_GONE.has(error.code ?? '')) logger.info({ code: error.code }, 'the client went away before the answer was sent');
    else logger.error({ err: error }, 'koa error');
  });
}

/**
 * Everything thrown inside the gateway ends here as the one error body, through
 * toErrorResponse like every other transport. A 5xx's detail goes only to the log.
 */
export function errorHandler() {
  return async (ctx: KoaContext, next: Next) => {
    try {
      await next();
    } catch (error) {
      const { status, code, headers, body, log } = toErrorResponse(error);
      await settleUnreadBody(ctx, code === 'PAYLOAD_TOO_LARGE');
      if (log) (ctx.state.logger as Logger | undefined)?.[log.level]({ err: error }, log.message);
      ctx.status = status;
      ctx.set(headers);
      ctx.body = body;
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

/**
 * A request body as bytes, at most `limit`: refused at once when Content-Length declares more
 * (the error handler then answers and closes the connection without reading it), or as soon
 * as more arrives than the limit. Other read failures (a body shorter than declared, an
 * aborted upload) are raw-body's 4xx errors, for the caller to name.
 */
export async function readLimitedBody(ctx: KoaContext, limit: number): Promise<Buffer> {
  const declared = ctx.get('content-length');
  if (declared && Number(declared) > limit) throw new AppError('PAYLOAD_TOO_LARGE', tooLargeMessage(limit));
  try {
    return await getRawBody(ctx.req, { limit, length: declared || undefined });
  } catch (error) {
    if ((error as { status?: number }).status === 413) throw new AppError('PAYLOAD_TOO_LARGE', tooLargeMessage(limit));
    throw error;
  }
}

/**
 * A JSON body's bytes as text. JSON is UTF-8 (RFC 8259): bytes that are not are refused,
 * rather than stored as U+FFFD in a name or an address the person never typed.
 */
export function jsonText(body: Buffer): string {
  const text = utf8Text(body);
  if (text === undefined) throw new AppError('INVALID_JSON', 'The request body is not valid UTF-8.');
  return text;
}

const LATIN1_HIGH = /[\u0080-\u00ff]/;

/**
 * A header value as its sender wrote it. Node reads header bytes as latin1, so UTF-8 text
 * arrives as pairs and triples of latin1 characters; decoded here when the bytes are UTF-8,
 * and left as read when they are not.
 */
export function headerText(value: string): string {
  return LATIN1_HIGH.test(value) ? (utf8Text(Buffer.from(value, 'latin1')) ?? value) : value;
}
