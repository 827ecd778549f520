import type { IncomingMessage, ServerResponse } from 'node:http';
import { TRPCError, type AnyTRPCRouter } from '@trpc/server';
import {
  acceptsRequestBody,
  coerceSchema,
  createProcedureCache,
  getBody,
  getContentType,
  getInputOutputParsers,
  getQuery,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  instanceofZodTypeOptional,
  normalizePath,
  unwrapZodType,
  zodSupportsCoerce,
  type OpenApiMethod,
  type OpenApiProcedure,
  type OpenApiRouter,
} from 'trpc-to-openapi';
import { ZodArray, type ZodType } from 'zod';
import type { Context } from '../../../server/src/trpc/context.ts';
import { toErrorResponse } from '../../../server/src/errors/response.ts';
import type { Logger } from '../../../server/src/lib/logger.ts';

type Request = IncomingMessage & { body?: unknown };

export type OpenApiHandlerOptions = {
  router: AnyTRPCRouter;
  createContext(options: { req: Request; res: ServerResponse }): Context;
  /** For faults of the adapter itself; a procedure's own are logged where they are settled (trpc.ts). */
  logger: Logger;
};

type InputPlan = { takesInput: boolean; coerce: boolean; arrayKeys: string[] };

const isArraySchema = (schema: unknown) =>
  schema instanceof ZodArray || (instanceofZodTypeOptional(schema as ZodType) && (schema as { unwrap(): unknown }).unwrap() instanceof ZodArray);

/**
 * What trpc-to-openapi works out from a procedure's input schema on every call, once.
 * Coercion ("60" as 60, "true" as true) is for inputs read from a query string or a path,
 * which are text; the library applies it to JSON bodies too, where `"false"` would read as
 * true. Here only routes without a body coerce. (It changes the schema in place, so a tRPC
 * call of such a procedure coerces as well; none of ours minds.)
 */
function createInputPlans(): (procedure: OpenApiProcedure, method: OpenApiMethod) => InputPlan {
  const plans = new WeakMap<OpenApiProcedure, InputPlan>();
  return (procedure, method) => {
    let plan = plans.get(procedure);
    if (!plan) {
      const schema = unwrapZodType(getInputOutputParsers(procedure).inputParser, true);
      const coerce = zodSupportsCoerce && instanceofZodTypeObject(schema) && !acceptsRequestBody(method);
      if (coerce) coerceSchema(schema);
      const shape = coerce ? (schema as unknown as { shape: Record<string, unknown> }).shape : {};
      plan = { takesInput: !instanceofZodTypeLikeVoid(schema), coerce, arrayKeys: Object.keys(shape).filter((key) => isArraySchema(shape[key])) };
      plans.set(procedure, plan);
    }
    return plan;
  };
}

async function readInput(req: Request, url: URL, plan: InputPlan, pathInput: Record<string, string>) {
  if (!plan.takesInput) return undefined;
  const useBody = acceptsRequestBody(req.method as OpenApiMethod);
  const input: Record<string, unknown> = { ...(useBody ? await getBody(req) : getQuery(req, url)), ...pathInput };
  // A query parameter given once is still a one-element array where the schema wants one.
  for (const key of useBody ? [] : plan.arrayKeys) if (input[key] !== undefined && !Array.isArray(input[key])) input[key] = [input[key]];
  return input;
}

type CallOptions = { path: string; getRawInput(): Promise<unknown>; ctx: Context; type: string };

/**
 * What `router.createCaller(ctx).a.b(input)` does, less a proxy per path segment and the
 * lookup of a procedure that the route table already found. No `signal` or `batchIndex`
 * (none of ours reads them): tRPC copies these options key by key at every middleware level.
 */
function callProcedure(found: { type: string; path: string; procedure: unknown }, ctx: Context, input: unknown): Promise<unknown> {
  const procedure = found.procedure as (options: CallOptions) => Promise<unknown>;
  return procedure({ path: found.path, getRawInput: async () => input, ctx, type: found.type });
}

function send(res: ServerResponse, status: number, headers: Iterable<[string, string]>, body: unknown): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  for (const [name, value] of headers) res.appendHeader(name, value);
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

/**
 * trpc-to-openapi 3.3's node handler, less two things. On every call it builds a Fetch
 * `Request` (URL, a copy of the headers, an AbortController, undici's constructor) only to
 * hand procedures an abort signal, and none of ours reads one: that cost about a third of
 * /me's throughput. And errors are answered with the one error body, straight from
 * toErrorResponse, instead of the library's own. Routing, input and coercion use the
 * library's pieces: this file is where they are fenced (tests/internals.db.test.ts).
 */
export function createOpenApiHandler(options: OpenApiHandlerOptions) {
  const { router, createContext, logger } = options;
  const findProcedure = createProcedureCache(router as unknown as OpenApiRouter);
  const inputPlan = createInputPlans();
  return async (req: Request, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url!.startsWith('/') ? `http://127.0.0.1${req.url}` : req.url!);
    const { procedure, pathInput } = findProcedure(req.method as OpenApiMethod, normalizePath(url.pathname)) ?? {};
    try {
      if (!procedure && req.method === 'HEAD') return send(res, 204, [], undefined);
      if (!procedure) throw new TRPCError({ message: 'Not found', code: 'NOT_FOUND' });
      const contentType = getContentType(req);
      if (acceptsRequestBody(req.method as OpenApiMethod) && !contentType?.startsWith('application/json')) {
        throw new TRPCError({ code: 'UNSUPPORTED_MEDIA_TYPE', message: contentType ? `Unsupported content-type "${contentType}` : 'Missing content-type header' });
      }
      const input = await readInput(req, url, inputPlan(procedure.procedure, req.method as OpenApiMethod), pathInput ?? {});
      const ctx = createContext({ req, res });
      const data = await callProcedure(procedure, ctx, input);
      send(res, ctx.response.status ?? 200, ctx.response.headers, data);
    } catch (error) {
      const { status, headers, body, log } = toErrorResponse(error);
      if (log && !(error instanceof TRPCError)) logger[log.level]({ err: error }, log.message);
      send(res, status, Object.entries(headers), body);
    }
  };
}
