import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnyTRPCRouter } from '@trpc/server';
import { createOpenApiNodeHttpHandler, type OpenApiRouter } from 'trpc-to-openapi';
import { toErrorResponse, type Context, type Logger } from '../../../server/src/index.ts';
import { readsBody, refuseMisplacedFields, sendJson, type RestRequest } from '../routes/rest-input.ts';
import { takeSessionCookies } from '../procedure-context.ts';


/**
 * FAST_PATHS=off: trpc-to-openapi's own `createOpenApiNodeHttpHandler`, through its documented
 * options only. What the gateway asks of REST beyond the library is added around it, as the
 * fast handler (openapi-handler.ts) does it: fields sent where the route does not read them
 * are refused first; the status and headers of an answer are the procedure's (or the error
 * table's, through `responseMeta`); and a failure's body is the one error body, written in
 * place of the library's (its `onError` names the failure, and the end of the response carries
 * toErrorResponse's body instead). Same signature as the fast handler's `handler`.
 *
 * One difference is the library's own and stays: it coerces a JSON body's strings too
 * (`"false"` read as true for a boolean), in place on the procedure's schema, so that tRPC's
 * calls of that procedure coerce as well from then on; the fast handler coerces only routes
 * whose input is text (query string, path).
 */
export function createStockOpenApiHandler(options: { router: AnyTRPCRouter; logger: Logger }) {
  const { logger } = options;
  const contexts = new WeakMap<IncomingMessage, () => Context>();
  const failures = new WeakMap<IncomingMessage, unknown>();
  const handle = createOpenApiNodeHttpHandler<OpenApiRouter, IncomingMessage, ServerResponse>({
    router: options.router as unknown as OpenApiRouter,
    createContext: ({ req }) => contexts.get(req)!(),
    onError: ({ error, req, ctx }) => {
      failures.set(req, error);
      // A procedure's own failures are logged where they are settled (server/src/trpc/procedures.ts); the adapter's here.
      const { log } = toErrorResponse(error);
      if (log && !ctx) logger[log.level]({ err: error.cause ?? error }, log.message);
    },
    responseMeta: ({ ctx, errors }) => {
      if (errors.length) {
        const { status, headers } = toErrorResponse(errors[0]);
        return { status, headers };
      }
      const { deps, response } = ctx as Context;
      const cookies = takeSessionCookies(deps.config, response);
      return { status: response.status ?? 200, headers: cookies.length ? { 'set-cookie': cookies } : {} };
    },
  });

  return async (req: RestRequest, res: ServerResponse, createContext: () => Context): Promise<void> => {
    try {
      refuseMisplacedFields(req, undefined, readsBody(req.method));
    } catch (error) {
      const { status, headers, body } = toErrorResponse(error);
      return sendJson(res, status, Object.entries(headers), body);
    }
    contexts.set(req, createContext);
    const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
    (res as { end: (chunk?: unknown) => ServerResponse }).end = (chunk) =>
      end(failures.has(req) ? JSON.stringify(toErrorResponse(failures.get(req)).body) : chunk);
    await handle(req, res);
  };
}
