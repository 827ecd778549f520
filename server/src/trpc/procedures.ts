import { getTRPCErrorFromUnknown, initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';
import type { Context } from './context.ts';
import { toErrorResponse } from '../errors/response.ts';
import { AppError, ERRORS, type ErrorCode } from '../errors/errors.ts';
import { textIssues } from '../lib/text.ts';
import { passwordHashOf } from '../modules/accounts/index.ts';
import { refuseUntilMfaSetUp } from '../modules/mfa/index.ts';
import { authenticate, type AuthContext } from '../modules/sessions/index.ts';
import { attachAccount, contextUnchanged } from './internals.ts';

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
function refuseCrossSiteCookieWrite(ctx: Context, type: string): void {
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
 * Input checks, authentication and error handling in one middleware, not publicProcedure.use(...):
 * tRPC copies the call's options with a slow spread helper at every middleware level, which a
 * profile of /me put at a quarter of its CPU. What authentication throws is settled as if the
 * procedure had thrown it.
 */
export const authedProcedure = t.procedure.use(async ({ ctx, next, path, type, meta, getRawInput }) => {
  let auth: AuthContext | undefined;
  try {
    await refuseControlCharacters(getRawInput);
    auth = await authenticate(ctx.deps, ctx.credentials);
    if (!auth) throw new AppError('UNAUTHORIZED');
    refuseCrossSiteCookieWrite(ctx, type);
    if (!meta?.beforeMfaSetup) await refuseUntilMfaSetUp(ctx.deps, auth.account);
  } catch (cause) {
    throw settle(getTRPCErrorFromUnknown(cause), ctx, path);
  }
  attachAccount(ctx, auth);
  // For the gateway's access log, which holds the same request object.
  ctx.request.accountId = auth.account.id;
  return settleResult(await next({ ctx: contextUnchanged<{ auth: AuthContext }>() }), ctx, path);
});

/** For operators: an authenticated account with role admin; anyone else gets 403 FORBIDDEN. */
export const adminProcedure = authedProcedure
  .use(({ ctx, next }) => {
    if (ctx.auth.account.role !== 'admin') throw new AppError('FORBIDDEN', 'Only administrators may do this.');
    return next();
  })
  .meta({ adminOnly: true });

/**
 * An authenticated procedure whose input asks for the current password in `field`, left
 * optional in `schema` because an account made through an identity provider has none to
 * give (passwords.check.ts says what stands in for it). An account that has a password must
 * still give it, and a body without it is refused as the schema with the field required
 * refuses it: 400 VALIDATION_FAILED naming every faulty field at once, the password among them.
 * The field is named in the meta, so that the OpenAPI document shows it as required, with a
 * note for the accounts without a password, and the route's errors include a password's.
 */
export function passwordConfirmingProcedure<S extends z.ZodObject>(schema: S, field = 'password') {
  const optional = schema.shape[field];
  const required = schema.extend({ [field]: optional instanceof z.ZodOptional ? optional.unwrap() : optional });
  return authedProcedure
    .meta({ passwordField: field })
    .use(async ({ ctx, next, getRawInput }) => {
      const raw = await getRawInput();
      const leftOut = typeof raw === 'object' && raw !== null && (raw as Record<string, unknown>)[field] === undefined;
      if (leftOut && (await passwordHashOf(ctx.deps.db, ctx.auth.account.id)) !== null) required.parse(raw);
      return next();
    })
    .input(schema);
}
