import type Router from '@koa/router';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import { AppError, appRouter, type Deps } from '../../../server/src/index.ts';
import { hasBody, jsonText, readLimitedBody } from '../http.ts';
import { procedureContextOf } from '../procedure-context.ts';
import { responseHeaders } from './procedure-meta.ts';
import { JSON_BODY_LIMIT } from './rest.ts';

/** The most calls one batch may carry (docs/API.md, tRPC); more is a 400. */
const MAX_BATCH_SIZE = 16;

/** The typed client's endpoint: tRPC's own protocol (batching, its error envelope). */
export function mountTrpc(router: Router, deps: Deps): void {
  router.all('/trpc/:path', async (ctx) => {
    // tRPC reads a POST's input from its body alone: one put in the URL would be dropped, and
    // the mutation run without it (a rotation with no grace period, say).
    if (ctx.method === 'POST' && ctx.querystring && new URLSearchParams(ctx.querystring).has('input')) {
      throw new AppError('VALIDATION_FAILED', undefined, { issues: [{ path: 'input', message: 'is read from the body of a POST, not from its URL' }] });
    }
    // Read here, as REST and the webhooks read theirs: tRPC's own reader counts the bytes as
    // they come, so a declared 999999999 would hold the connection until the request timeout.
    const body = ctx.method === 'POST' && hasBody(ctx) ? jsonText(await readLimitedBody(ctx, JSON_BODY_LIMIT)) : undefined;
    if (body !== undefined) Object.assign(ctx.req, { body });
    // Hand the request to tRPC; Koa must neither answer nor default to 404.
    ctx.respond = false;
    ctx.res.statusCode = 200;
    await nodeHTTPRequestHandler({
      router: appRouter,
      req: ctx.req,
      res: ctx.res,
      path: ctx.params.path,
      maxBodySize: JSON_BODY_LIMIT,
      maxBatchSize: MAX_BATCH_SIZE,
      createContext: () => procedureContextOf(deps, ctx),
      responseMeta: ({ ctx: procedureCtx, errors, data }) => responseHeaders(procedureCtx, errors, data.some((answer) => 'result' in answer)),
    });
  });
}
