import { getTRPCErrorFromUnknown, initTRPC, TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { ZodError } from 'zod';
import type { Context } from './context.ts';
import { AppError, type ErrorCode, type ErrorIssue } from './errors.ts';
import { isDatabaseUnavailable } from './lib/db.ts';
import { authenticate, type AuthContext } from './modules/auth/auth.credentials.ts';

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'TOO_MANY_REQUESTS',
  503: 'SERVICE_UNAVAILABLE',
};

const DATABASE_RETRY_AFTER_SECONDS = 5;

export function zodIssues(error: ZodError): ErrorIssue[] {
  return error.issues.map((issue) => ({ path: issue.path.join('.') || '(body)', message: issue.message }));
}

/** The contract's code and issues for any error a procedure ended with. */
export function describeError(error: TRPCError): { appCode: ErrorCode; issues?: ErrorIssue[]; retryAfterSeconds?: number } {
  const cause = error.cause;
  if (cause instanceof AppError) return { appCode: cause.code, issues: cause.extra.issues, retryAfterSeconds: cause.extra.retryAfterSeconds };
  if (cause instanceof ZodError) return { appCode: 'VALIDATION_FAILED', issues: zodIssues(cause) };
  const byTrpcCode: Partial<Record<TRPC_ERROR_CODE_KEY, ErrorCode>> = {
    PARSE_ERROR: 'INVALID_JSON',
    BAD_REQUEST: 'VALIDATION_FAILED',
    UNAUTHORIZED: 'UNAUTHORIZED',
    NOT_FOUND: 'NOT_FOUND',
    METHOD_NOT_SUPPORTED: 'METHOD_NOT_ALLOWED',
    PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
    UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
    TOO_MANY_REQUESTS: 'RATE_LIMITED',
  };
  return { appCode: byTrpcCode[error.code] ?? 'INTERNAL_ERROR' };
}

/**
 * trpc-to-openapi's meta, plus the success status of a REST route that answers other than
 * 200 (register's 201), for the OpenAPI document.
 */
export type ProcedureMeta = OpenApiMeta<{ successStatus?: number }>;

const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
  .create({
    errorFormatter({ shape, error }) {
      const { appCode, issues } = describeError(error);
      const internal = shape.data.httpStatus >= 500;
      return {
        ...shape,
        message: internal ? 'Something went wrong on our side.' : shape.message,
        data: { code: shape.data.code, httpStatus: shape.data.httpStatus, path: shape.data.path, appCode, issues },
      };
    },
  });

/**
 * AppErrors become TRPCErrors with the matching HTTP status, in one place; anything else that
 * ends as a 500 is logged. Returns the same error when there is nothing to change.
 */
function mapAppError(error: TRPCError, ctx: Context, path: string): TRPCError {
  const cause = error.cause;
  if (cause instanceof AppError) {
    const code = TRPC_CODE_BY_STATUS[cause.status] ?? 'INTERNAL_SERVER_ERROR';
    return new TRPCError({ code, message: cause.message, cause });
  }
  if (error.code === 'INTERNAL_SERVER_ERROR') {
    const log = { err: error.cause ?? error, path, requestId: ctx.request.requestId };
    if (isDatabaseUnavailable(error.cause)) {
      // Not our bug and not the caller's: a 503 with Retry-After tells clients to try again.
      ctx.deps.logger.warn(log, 'database unavailable');
      const unavailable = new AppError('SERVICE_UNAVAILABLE', undefined, { retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS });
      return new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: unavailable.message, cause: unavailable });
    }
    ctx.deps.logger.error(log, 'procedure failed');
  }
  return error;
}

/** A failed middleware result with its error mapped; the very same result when nothing changes. */
function mapFailedResult<R extends { ok: true } | { ok: false; error: TRPCError }>(result: R, ctx: Context, path: string): R {
  if (result.ok) return result;
  const error = mapAppError(result.error, ctx, path);
  return error === result.error ? result : { ...result, error };
}

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure.use(async ({ next, ctx, path }) => mapFailedResult(await next(), ctx, path));

/**
 * Error mapping and authentication in one middleware, not publicProcedure.use(...): tRPC
 * copies the call's options with a slow spread helper at every middleware level, which a
 * profile of /me put at a quarter of its CPU. The outcome is that of the two levels: what
 * authentication throws is mapped as if the procedure had thrown it.
 */
export const authedProcedure = t.procedure.use(async ({ ctx, next, path }) => {
  let auth: AuthContext | undefined;
  try {
    auth = await authenticate(ctx.deps, ctx.credentials);
    if (!auth) throw new AppError('UNAUTHORIZED');
  } catch (cause) {
    throw mapAppError(getTRPCErrorFromUnknown(cause), ctx, path);
  }
  // The account goes onto this request's own context object: next({ ctx: { auth } }) would
  // copy the whole context with that same helper. (The calls of a tRPC batch share one
  // context, and with it one set of credentials, so they put the same account there.) The
  // `ctx` given to next is only its type: tRPC reads no override from an undefined one, so
  // procedures still see `ctx.auth` typed.
  (ctx as Context & { auth?: AuthContext }).auth = auth;
  return mapFailedResult(await next({ ctx: undefined as unknown as { auth: AuthContext } }), ctx, path);
});
