import { getTRPCErrorFromUnknown, initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Context } from './context.ts';
import { toErrorResponse } from '../errors/response.ts';
import { AppError, ERRORS, type ErrorCode } from '../errors/errors.ts';
import { textIssues } from '../lib/text.ts';

/**
 * trpc-to-openapi's meta, plus what the OpenAPI document and the error declarations read
 * (rest-meta.ts): the success status of a REST route that answers other than 200
 * (register's 201), the error codes it declares, and what kind of procedure it is.
 */
export type ProcedureMeta = OpenApiMeta<{
  successStatus?: number;
  beforeMfaSetup?: boolean;
  /** The codes the route answers with beyond those of its kind, each with when (rest-meta.ts routeErrors). */
  errors?: Partial<Record<ErrorCode, string>>;
  /** With a second factor on, the body must carry its proof as well (requireStepUp). */
  stepUp?: boolean;
  /** The input field that carries the current password (passwordConfirmingProcedure). */
  passwordField?: string;
  /** Accounts with role admin only (adminProcedure). */
  adminOnly?: boolean;
}>;

const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
  .create({
    // tRPC's own envelope stays (the typed client reads it); the error code, message and
    // issues go into it, from the same answer REST gives. tRPC sends the `httpStatus` of
    // the data as the answer's status: the one table's.
    errorFormatter({ shape, error }) {
      const { status, code, body } = toErrorResponse(error);
      // What the REST body carries beside code and message (`mfa_token`, `methods`) goes into data too.
      const { success: _success, code: _code, message, issues, ...details } = body;
      return {
        ...shape,
        message,
        data: { ...details, code: shape.data.code, httpStatus: status, path: shape.data.path, appCode: code, issues },
      };
    },
  });

/**
 * A procedure's failure, logged as what it is, and named with its code's tRPC code (the
 * envelope's JSON-RPC code comes from it; the cause stays, for the formatter). The same
 * error when nothing changes.
 */
function settle(error: TRPCError, ctx: Context, path: string): TRPCError {
  const { code: appCode, body, log } = toErrorResponse(error);
  if (log) ctx.deps.logger[log.level]({ err: error.cause ?? error, path, requestId: ctx.request.requestId }, log.message);
  const code = ERRORS[appCode].trpc;
  return code === error.code ? error : new TRPCError({ code, message: body.message, cause: error.cause ?? error });
}

/** A failed middleware result with its error settled; the very same result when nothing changes. */
function settleResult<R extends { ok: true } | { ok: false; error: TRPCError }>(result: R, ctx: Context, path: string): R {
  if (result.ok) return result;
  const error = settle(result.error, ctx, path);
  return error === result.error ? result : { ...result, error };
}

/**
 * A control character in any string of an input (NUL cannot even be stored), or half of a
 * surrogate pair, is refused before the input is parsed, whatever procedure it is for.
 */
async function refuseControlCharacters(getRawInput: () => Promise<unknown>): Promise<void> {
  const issues = textIssues(await getRawInput());
  if (issues.length) throw new AppError('VALIDATION_FAILED', undefined, { issues });
}

/**
 * docs/API.md, Credentials: a mutation authenticated by the session cookie alone must come from a
 * trusted site and be JSON. A browser attaches the cookie to a form posted from anywhere; no
 * form can send JSON, and a script on another site cannot send it without CORS.
 */
export function refuseCrossSiteCookieWrite(ctx: Context, type: string): void {
  const write = ctx.request.browserWrite;
  if (type !== 'mutation' || ctx.credentials.bearer !== undefined || !write) return;
  if (write.crossSite) throw new AppError('FORBIDDEN', 'A request from another site cannot use the session cookie to change anything.');
  if (!write.json) throw new AppError('UNSUPPORTED_MEDIA_TYPE');
}

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

export const publicProcedure = t.procedure.use(async ({ next, ctx, path, getRawInput }) => {
  try {
    await refuseControlCharacters(getRawInput);
  } catch (cause) {
    throw settle(getTRPCErrorFromUnknown(cause), ctx, path);
  }
  return settleResult(await next(), ctx, path);
});

/**
 * What admits a caller to a guarded procedure: it authenticates the context's credentials and
 * checks what the procedure's meta asks (modules/access says who is admitted), and throws
 * what refuses the call. What it returns is the procedures' `ctx.auth`.
 */
export type Guard<A> = (ctx: Context, call: { type: string; meta: ProcedureMeta | undefined }) => Promise<A>;

/**
 * A procedure a guard admits its caller to. Input checks, the guard and error handling run
 * in one middleware, not publicProcedure.use(...): tRPC copies the call's options with a slow
 * spread helper at every middleware level, which a profile of /me put at a quarter of its
 * CPU. What the guard throws is settled as if the procedure had thrown it.
 */
export function guardedProcedure<A>(guard: Guard<A>) {
  return t.procedure.use(async ({ ctx, next, path, type, meta, getRawInput }) => {
    let auth: A;
    try {
      await refuseControlCharacters(getRawInput);
      auth = await guard(ctx, { type, meta });
    } catch (cause) {
      throw settle(getTRPCErrorFromUnknown(cause), ctx, path);
    }
    return settleResult(await next({ ctx: { auth } }), ctx, path);
  });
}
