import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { ZodError } from 'zod';
import { AppError, codeForStatus, describeIssues, tooLargeMessage, ERRORS, errorBody, zodIssues, type ErrorBody, type ErrorCode, type ErrorExtra } from './errors.ts';
import { isDatabaseUnavailable, isRefusedValue } from '../lib/db.ts';

/**
 * How a failure goes to the log: not at all when it is the caller's mistake, as a warning
 * when the database is away or refused a value, as an error when it is our fault.
 */
export type ErrorLog = { level: 'warn' | 'error'; message: string } | undefined;

export type ErrorResponse = {
  status: number;
  code: ErrorCode;
  headers: Record<string, string>;
  body: ErrorBody;
  log: ErrorLog;
};

const FAULT: ErrorLog = { level: 'error', message: 'unexpected error' };

/** Clients are told to come back after this long while the database is away. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * The one way anything thrown becomes an answer: Koa's error handler, the REST adapter,
 * tRPC's error formatter and middleware, and the pages all call it. A TRPCError is looked
 * through to its cause; an AppError says its own code; a Zod error is a validation failure;
 * PostgreSQL's refusals and outages, and body parsers' http-errors, have codes of their own;
 * everything else is our fault, a 500 without detail. It reads nothing but the error, so
 * every layer that asks about the same error gets the same answer, and a failure is mapped
 * once: the answer is kept with the error (and with the cause a TRPCError wraps), so the
 * layers that ask again on its way out (the procedure's settling, tRPC's formatter and
 * responseMeta) look it up.
 */
export function toErrorResponse(error: unknown): ErrorResponse {
  if (typeof error !== 'object' || error === null) return mapError(error);
  const known = answered.get(error);
  if (known) return known;
  const response = mapError(error);
  answered.set(error, response);
  return response;
}

const answered = new WeakMap<object, ErrorResponse>();

function mapError(error: unknown): ErrorResponse {
  if (error instanceof TRPCError) return fromTrpcError(error);
  if (error instanceof AppError) {
    return build(error.code, error.message, error.extra, error.code === 'INTERNAL_ERROR' ? FAULT : undefined);
  }
  if (error instanceof ZodError) {
    const issues = zodIssues(error);
    return build('VALIDATION_FAILED', describeIssues(issues), { issues });
  }
  if (isRefusedValue(error)) {
    return build('VALIDATION_FAILED', 'A value in the request cannot be stored.', {}, { level: 'warn', message: 'database refused a value' });
  }
  if (isDatabaseUnavailable(error)) {
    return build('SERVICE_UNAVAILABLE', undefined, { retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS }, { level: 'warn', message: 'database unavailable' });
  }
  const { status, limit } = error as { status?: unknown; limit?: unknown };
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // http-errors from a body parser: a 400 there means the body could not be read as sent.
    if (status === 413 && typeof limit === 'number') return build('PAYLOAD_TOO_LARGE', tooLargeMessage(limit));
    return build(status === 400 ? 'INVALID_JSON' : codeForStatus(status));
  }
  return build('INTERNAL_ERROR', undefined, {}, FAULT);
}

/** tRPC wraps what procedures throw; what it raises itself (bad JSON, unknown path) has only its code. */
function fromTrpcError(error: TRPCError): ErrorResponse {
  if (error.cause && !(error.cause instanceof TRPCError)) {
    const cause = toErrorResponse(error.cause);
    if (cause.code !== 'INTERNAL_ERROR' || error.code === 'INTERNAL_SERVER_ERROR') return cause;
  }
  if (error.code === 'PARSE_ERROR') return build('INVALID_JSON');
  const status = getHTTPStatusCodeFromError(error);
  return build(codeForStatus(status), status >= 500 ? undefined : error.message, {}, status >= 500 ? FAULT : undefined);
}

function build(code: ErrorCode, message?: string, extra: ErrorExtra = {}, log?: ErrorLog): ErrorResponse {
  const body = errorBody(code, message, extra.issues, extra.details);
  const headers: Record<string, string> = {};
  if (extra.retryAfterSeconds) headers['retry-after'] = String(extra.retryAfterSeconds);
  if (code === 'UNAUTHORIZED') headers['www-authenticate'] = 'Bearer';
  return { status: ERRORS[code].status, code, headers, body, log };
}
