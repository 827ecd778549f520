import type { ServerResponse } from 'node:http';
import { TRPCError, type AnyTRPCRouter } from '@trpc/server';
import {
  acceptsRequestBody,
  coerceSchema,
  createProcedureCache,
  forEachOpenApiProcedure,
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
import { toErrorResponse, type Context, type Logger } from '../../../server/src/index.ts';
import { refuseMisplacedFields, sendJson as send, urlOf, type RestRequest } from '../routes/rest-input.ts';
import { takeSessionCookies } from '../procedure-context.ts';

type Request = RestRequest;

export type OpenApiHandlerOptions = {
  router: AnyTRPCRouter;
  /** For faults of the adapter itself; a procedure's own are logged where they are settled (server/src/trpc/procedures.ts, settle). */
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

async function readInput(req: Request, url: URL | undefined, plan: InputPlan, pathInput: Record<string, string>) {
  const useBody = acceptsRequestBody(req.method as OpenApiMethod);
  refuseMisplacedFields(req, url, useBody);
  if (!plan.takesInput) return undefined;
  const input: Record<string, unknown> = { ...(useBody ? await getBody(req) : getQuery(req, url ?? urlOf(req))), ...pathInput };
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

/** A REST route found for a request: the procedure, the values its path gave, and its path pattern (`/auth/sessions/{id}`). */
export type RestRoute = {
  procedure: { type: string; path: string; procedure: OpenApiProcedure };
  pathInput: Record<string, string>;
  pattern: string;
};

/**
 * A path the URL parser hands back unchanged: no dot segment or percent-escape it would
 * resolve, no character it would escape. For any other path the route is found on the parsed
 * URL's path, as the library's handler finds it.
 */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_~!$&'()*+,;=:@-]+)*\/?$/;

/**
 * Why not the library's public `createOpenApiNodeHttpHandler`: this is trpc-to-openapi 3.3's
 * node handler, less two things. On every call it builds a Fetch `Request` (URL, a copy of
 * the headers, an AbortController, undici's constructor) only to hand procedures an abort
 * signal, and none of ours reads one: that cost about a third of
 * /me's throughput. And errors are answered with the one error body, straight from
 * toErrorResponse, instead of the library's own. Routing, input and coercion use the
 * library's pieces, exported by its package but not documented as its API, and tRPC's way of
 * calling a procedure (callProcedure): this file is the only one that reaches them, and
 * tests/internals.db.test.ts tries each as used here, so an upgrade that moves one fails there.
 * A fast path (index.ts): FAST_PATHS=off answers with the public handler instead
 * (stock-openapi-handler.ts), and tests/fast-paths.compare.rest.test.ts holds the two to the
 * same bytes.
 *
 * The handler answers a request by itself (`handler(req, res, createContext)`, finding the
 * route), or answers one whose route `handler.find` found first (`handler.answer`): the
 * gateway finds REST routes that way before its router tries every route of the site.
 */
export function createOpenApiHandler(options: OpenApiHandlerOptions) {
  const { router, logger } = options;
  const findProcedure = createProcedureCache(router as unknown as OpenApiRouter);
  const patterns = new Map<string, string>();
  forEachOpenApiProcedure((router as unknown as OpenApiRouter)._def.procedures, ({ path, meta }) => patterns.set(path, normalizePath(meta.openapi!.path)));
  const inputPlan = createInputPlans();

  function find(method: string, path: string): RestRoute | undefined {
    const found = findProcedure(method as OpenApiMethod, normalizePath(path));
    if (!found?.procedure) return undefined;
    return { procedure: found.procedure as RestRoute['procedure'], pathInput: found.pathInput ?? {}, pattern: patterns.get(found.procedure.path)! };
  }

  /** `createContext` is called once the route and its input are known, as the library's own handler does. */
  async function answer(req: Request, res: ServerResponse, route: RestRoute | undefined, createContext: () => Context, url?: URL): Promise<void> {
    try {
      if (!route && req.method === 'HEAD') return send(res, 204, [], undefined);
      if (!route) throw new TRPCError({ message: 'Not found', code: 'NOT_FOUND' });
      const contentType = getContentType(req);
      if (acceptsRequestBody(req.method as OpenApiMethod) && !contentType?.startsWith('application/json')) {
        throw new TRPCError({ code: 'UNSUPPORTED_MEDIA_TYPE', message: contentType ? `Unsupported content-type "${contentType}` : 'Missing content-type header' });
      }
      const input = await readInput(req, url, inputPlan(route.procedure.procedure, req.method as OpenApiMethod), route.pathInput);
      const ctx = createContext();
      const data = await callProcedure(route.procedure, ctx, input);
      send(res, ctx.response.status ?? 200, takeSessionCookies(ctx.deps.config, ctx.response).map((cookie) => ['set-cookie', cookie]), data);
    } catch (error) {
      const { status, headers, body, log } = toErrorResponse(error);
      if (log && !(error instanceof TRPCError)) logger[log.level]({ err: error }, log.message);
      send(res, status, Object.entries(headers), body);
    }
  }

  const handler = async (req: Request, res: ServerResponse, createContext: () => Context): Promise<void> => {
    const url = urlOf(req);
    return answer(req, res, find(req.method!, url.pathname), createContext, url);
  };
  return Object.assign(handler, {
    /** The route of `method` and a path relative to the REST prefix, for a plain path only (PLAIN_PATH); else undefined. */
    find: (method: string, path: string) => (PLAIN_PATH.test(path) ? find(method, path) : undefined),
    answer,
  });
}
