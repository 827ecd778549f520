import type { IncomingMessage, ServerResponse } from 'node:http';
import { TRPCError, type AnyTRPCRouter } from '@trpc/server';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import {
  acceptsRequestBody,
  coerceSchema,
  createProcedureCache,
  getBody,
  getContentType,
  getErrorFromUnknown,
  getInputOutputParsers,
  getQuery,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  instanceofZodTypeOptional,
  normalizePath,
  TRPC_ERROR_CODE_HTTP_STATUS,
  unwrapZodType,
  zodSupportsCoerce,
  type OpenApiMethod,
  type OpenApiProcedure,
  type OpenApiRouter,
} from 'trpc-to-openapi';
import { ZodArray, type ZodType } from 'zod';
import type { Context } from '../../../server/src/context.ts';

type Request = IncomingMessage & { body?: unknown };
type Headers = Record<string, string | string[] | undefined>;

export type OpenApiHandlerOptions = {
  router: AnyTRPCRouter;
  createContext(options: { req: Request; res: ServerResponse }): Context | Promise<Context>;
  responseMeta(options: { ctx?: Context; errors: TRPCError[] }): { status?: number; headers?: Headers };
};

type InputPlan = { takesInput: boolean; coerce: boolean; arrayKeys: string[] };

const isArraySchema = (schema: unknown) =>
  schema instanceof ZodArray || (instanceofZodTypeOptional(schema as ZodType) && (schema as { unwrap(): unknown }).unwrap() instanceof ZodArray);

/** What trpc-to-openapi works out from a procedure's input schema on every call, once. */
function createInputPlans(): (procedure: OpenApiProcedure) => InputPlan {
  const plans = new WeakMap<OpenApiProcedure, InputPlan>();
  return (procedure) => {
    let plan = plans.get(procedure);
    if (!plan) {
      const schema = unwrapZodType(getInputOutputParsers(procedure).inputParser, true);
      const coerce = zodSupportsCoerce && instanceofZodTypeObject(schema);
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

function send(res: ServerResponse, status: number, headers: Headers, body: unknown): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) res.setHeader(name, value);
  res.end(JSON.stringify(body));
}

function errorBody(router: AnyTRPCRouter, error: TRPCError, procedure: { type: 'query' | 'mutation'; path: string } | undefined, input: unknown, ctx: Context | undefined) {
  const shape = getErrorShape({ config: router._def._config, error, type: procedure?.type ?? 'unknown', path: procedure?.path, input, ctx });
  const invalidInput = error.code === 'BAD_REQUEST' && error.cause instanceof Error && error.cause.name === 'ZodError';
  return {
    ...shape,
    message: invalidInput ? 'Input validation failed' : (shape?.message ?? error.message ?? 'An error occurred'),
    code: error.code,
    issues: invalidInput ? (error.cause as unknown as { issues: unknown }).issues : undefined,
  };
}

/**
 * trpc-to-openapi 3.3's node handler, less one thing: on every call it builds a Fetch
 * `Request` (URL, a copy of the headers, an AbortController, undici's constructor) only to
 * hand procedures an abort signal, and none of ours reads one. That cost about a third of
 * /me's throughput. Routing, input, coercion and error bodies use the library's own pieces.
 */
export function createOpenApiHandler(options: OpenApiHandlerOptions) {
  const { router, createContext, responseMeta } = options;
  const findProcedure = createProcedureCache(router as unknown as OpenApiRouter);
  const inputPlan = createInputPlans();
  return async (req: Request, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url!.startsWith('/') ? `http://127.0.0.1${req.url}` : req.url!);
    const { procedure, pathInput } = findProcedure(req.method as OpenApiMethod, normalizePath(url.pathname)) ?? {};
    let input: Record<string, unknown> | undefined;
    let ctx: Context | undefined;
    try {
      if (!procedure && req.method === 'HEAD') return send(res, 204, {}, undefined);
      if (!procedure) throw new TRPCError({ message: 'Not found', code: 'NOT_FOUND' });
      const contentType = getContentType(req);
      if (acceptsRequestBody(req.method as OpenApiMethod) && !contentType?.startsWith('application/json')) {
        throw new TRPCError({ code: 'UNSUPPORTED_MEDIA_TYPE', message: contentType ? `Unsupported content-type "${contentType}` : 'Missing content-type header' });
      }
      input = await readInput(req, url, inputPlan(procedure.procedure), pathInput ?? {});
      ctx = await createContext({ req, res });
      const data = await callProcedure(procedure, ctx, input);
      const meta = responseMeta({ ctx, errors: [] });
      send(res, meta.status ?? 200, meta.headers ?? {}, data);
    } catch (cause) {
      const error = getErrorFromUnknown(cause);
      const meta = responseMeta({ ctx, errors: [error] });
      send(res, meta.status ?? TRPC_ERROR_CODE_HTTP_STATUS[error.code] ?? 500, meta.headers ?? {}, errorBody(router, error, procedure, input, ctx));
    }
  };
}
