import type { IncomingMessage, ServerResponse } from 'node:http';
import type Router from '@koa/router';
import type { Context as KoaContext, Next } from 'koa';
import getRawBody from 'raw-body';
import { createContext, type RequestInfo } from '../../../server/src/context.ts';
import type { Deps } from '../../../server/src/deps.ts';
import { AppError, ERROR_STATUS, errorBody, type ErrorCode } from '../../../server/src/errors.ts';
import { appRouter } from '../../../server/src/router.ts';
import { contentTypeOf, hasBody } from '../http.ts';
import { renderDocsPage } from './docs-page.ts';
import { createOpenApiDocument } from './openapi-document.ts';
import { createOpenApiHandler } from './openapi-handler.ts';
import { responseMetaFor } from './procedure-meta.ts';

export const API_PREFIX = '/api/v1';
export const JSON_BODY_LIMIT = 16 * 1024;

/**
 * The body is read here, not by trpc-to-openapi: it accepts only the exact type
 * `application/json` and has no 16 KiB cap. A pre-set `req.body` is what it then uses.
 */
async function readJsonBody(ctx: KoaContext, next: Next) {
  const req = ctx.req;
  if (ctx.method === 'GET' || ctx.method === 'HEAD') return next();
  if (!hasBody(ctx)) {
    Object.assign(req, { body: {} });
  } else {
    const { type, charset } = contentTypeOf(ctx);
    if (type !== 'application/json' || (charset && charset !== 'utf-8' && charset !== 'utf8')) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE');
    }
    const raw = await getRawBody(req, { limit: JSON_BODY_LIMIT, length: ctx.get('content-length') || undefined, encoding: 'utf8' });
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new AppError('INVALID_JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new AppError('VALIDATION_FAILED', 'The request body must be a JSON object.');
    }
    Object.assign(req, { body: parsed });
  }
  ctx.req.headers['content-type'] = 'application/json';
  return next();
}

const CODE_BY_STATUS = Object.fromEntries(
  Object.entries(ERROR_STATUS).map(([code, status]) => [status, code as ErrorCode]).reverse(),
) as Record<number, ErrorCode>;

/** trpc-to-openapi writes `{message, code, data, issues}`; the contract's body is rewritten in. */
function shapeErrorBodies(res: ServerResponse): void {
  const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
  res.end = ((chunk?: unknown) => {
    if (res.statusCode < 400 || typeof chunk !== 'string') return end(chunk);
    let original: { message?: string; data?: { appCode?: ErrorCode; issues?: [] } } = {};
    try {
      original = JSON.parse(chunk);
    } catch {
      original = {};
    }
    const code = original.data?.appCode ?? CODE_BY_STATUS[res.statusCode] ?? 'INTERNAL_ERROR';
    return end(JSON.stringify(errorBody(code, original.message, original.data?.issues)));
  }) as ServerResponse['end'];
}

const requestInfo = new WeakMap<IncomingMessage, RequestInfo>();

export function mountRest(router: Router, deps: Deps): void {
  const document = createOpenApiDocument(deps.config.publicUrl, API_PREFIX);
  const handler = createOpenApiHandler({
    router: appRouter,
    createContext: ({ req }) => createContext(deps, req, requestInfo.get(req) ?? { ip: '', requestId: '' }),
    responseMeta: ({ ctx, errors }) => responseMetaFor({ ctx, errors, useStatus: true }),
  });

  router.get(`${API_PREFIX}/openapi.json`, (ctx) => {
    ctx.body = document;
  });
  router.get(`${API_PREFIX}/docs`, (ctx) => {
    ctx.type = 'html';
    ctx.body = renderDocsPage(document);
  });

  const call = async (ctx: KoaContext) => {
    requestInfo.set(ctx.req, { ip: ctx.ip, userAgent: ctx.get('user-agent') || undefined, requestId: ctx.state.requestId });
    ctx.req.url = ctx.req.url!.slice(API_PREFIX.length);
    // trpc-to-openapi answers HEAD with a bare 204; as the GET it answers like it (Node drops the body).
    if (ctx.req.method === 'HEAD') ctx.req.method = 'GET';
    ctx.respond = false;
    shapeErrorBodies(ctx.res);
    await handler(ctx.req, ctx.res);
  };
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    for (const method of Object.keys(operations ?? {}) as Array<'get' | 'post' | 'put' | 'patch' | 'delete'>) {
      router[method](`${API_PREFIX}${path}`, readJsonBody, call);
    }
  }
}
