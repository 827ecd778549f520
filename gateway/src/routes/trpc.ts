import type Router from '@koa/router';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import type { Deps } from '../../../server/src/deps.ts';
import { createContext } from '../../../server/src/context.ts';
import { appRouter } from '../../../server/src/router.ts';
import { responseMetaFor } from './procedure-meta.ts';
import { JSON_BODY_LIMIT } from './rest.ts';

/** The typed client's endpoint: tRPC's own protocol (batching, its error envelope). */
export function mountTrpc(router: Router, deps: Deps): void {
  router.all('/trpc/:path', async (ctx) => {
    // Hand the raw request to tRPC; Koa must neither answer nor default to 404.
    ctx.respond = false;
    ctx.res.statusCode = 200;
    const request = { ip: ctx.ip, userAgent: ctx.get('user-agent') || undefined, requestId: ctx.state.requestId };
    await nodeHTTPRequestHandler({
      router: appRouter,
      req: ctx.req,
      res: ctx.res,
      path: ctx.params.path,
      maxBodySize: JSON_BODY_LIMIT,
      createContext: ({ req }) => createContext(deps, req, request),
      responseMeta: ({ ctx: procedureCtx, errors }) => responseMetaFor({ ctx: procedureCtx, errors, useStatus: false }),
    });
  });
}
