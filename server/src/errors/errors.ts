import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { ZodError } from 'zod';
import { UNKNOWN_FIELD } from '../lib/validation.ts';

/** One code's row: the HTTP status, tRPC's name for it, what a caller is told by default, and what it means (docs/API.md). */
export type ErrorRow = { status: number; trpc: TRPC_ERROR_CODE_KEY; message: string; meaning: string };

/**
 * The closed list of error codes: the one table from a code to its HTTP status, tRPC's code,
 * the default message and the meaning the docs give. REST, tRPC, the pages, the webhooks and
 * the docs all read it. Within a status the first code is the generic one (`codeForStatus`).
 */
export const ERRORS = {
  VALIDATION_FAILED: {
    status: 400,
    trpc: 'BAD_REQUEST',
    message: 'The request is not valid.',
    meaning: 'A field is missing, malformed, out of range or not a field of the route; `issues` names each one. Also a control character in a path segment or header.',
  },
  INVALID_JSON: { status: 400, trpc: 'BAD_REQUEST', message: 'The request body is not valid JSON.', meaning: 'The body is not valid JSON.' },
  INVALID_TOKEN: {
    status: 400,
    trpc: 'BAD_REQUEST',
    message: 'The token is invalid, already used or expired.',
    meaning: 'An e-mailed token (verification, password reset, e-mail change) or a sign-in\'s `mfa_token` is unknown, used or expired.',
  },
  INVALID_PAYLOAD: {
    status: 400,
    trpc: 'BAD_REQUEST',
    message: 'The payload could not be understood.',
    meaning: 'Webhooks only: the signature is valid, but the body is not a payload the scheme can read.',
  },
  INVALID_CODE: {
    status: 400,
    trpc: 'BAD_REQUEST',
    message: 'The code is wrong, already used or expired.',
    meaning: 'A step-up proof (`code` or `response`) is wrong, replayed or expired; `issues` names the field. It counts as a failed login of the account.',
  },
  UNAUTHORIZED: {
    status: 401,
    trpc: 'UNAUTHORIZED',
    message: 'Authentication is required.',
    meaning: 'No valid credential: no JWT, API key or cookie, or an expired or revoked one. Sent with `WWW-Authenticate: Bearer`.',
  },
  INVALID_CREDENTIALS: {
    status: 401,
    trpc: 'UNAUTHORIZED',
    message: 'The e-mail or password is wrong.',
    meaning: 'Login: unknown e-mail or wrong password (one answer for both), or a wrong second-step code. Elsewhere: the current password is wrong.',
  },
  INVALID_SIGNATURE: {
    status: 401,
    trpc: 'UNAUTHORIZED',
    message: 'The signature is missing or wrong.',
    meaning: 'Webhooks only: the signature header is missing, malformed or wrong, or its timestamp is too old.',
  },
  FORBIDDEN: {
    status: 403,
    trpc: 'FORBIDDEN',
    message: 'This request is not allowed.',
    meaning:
      'Not allowed: a write by the `svc_token` cookie from another site, an admin route called by an account that is not an admin, a key rotation by the replaced key, or connecting an identity provider with an API key.',
  },
  EMAIL_NOT_VERIFIED: {
    status: 403,
    trpc: 'FORBIDDEN',
    message: 'The e-mail address has not been verified yet.',
    meaning: 'Login: the password is right, but the address is not verified yet.',
  },
  MFA_REQUIRED: {
    status: 403,
    trpc: 'FORBIDDEN',
    message: 'The password is right; now give your second factor.',
    meaning: 'Login: the password is right and the account has a second factor. The body carries `mfa_token` (single use, 5 minutes) and `methods`; finish with `POST /login/mfa`. No cookie is set.',
  },
  STEP_UP_REQUIRED: {
    status: 403,
    trpc: 'FORBIDDEN',
    message: 'Confirm it is you with your second factor first.',
    meaning:
      'A sensitive change of an account with a second factor needs `code` or `response` in its body: by API key every time, by a session unless it gave one in the last 5 minutes; `methods` says which the account has.',
  },
  MFA_SETUP_REQUIRED: {
    status: 403,
    trpc: 'FORBIDDEN',
    message: 'Your account must turn on a second factor before it can do this.',
    meaning: 'The account has a role listed in `MFA_REQUIRED_ROLES` and no second factor yet: only `/me`, `/mfa*`, `/logout` and `/sessions*` answer until it has one.',
  },
  REAUTH_REQUIRED: {
    status: 403,
    trpc: 'FORBIDDEN',
    message: 'Sign in again with your identity provider first: your account has no password to confirm this with.',
    meaning: 'A change that asks for the current password, by an account without one, needs a sign-in through one of its identity providers in the last 10 minutes by the same session. `reauth_url` starts one and comes back to the account page.',
  },
  NOT_FOUND: {
    status: 404,
    trpc: 'NOT_FOUND',
    message: 'Not found.',
    meaning: "No such route, session, passkey, delivery, site or channel. Another account's site or channel is not found either.",
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    trpc: 'METHOD_NOT_SUPPORTED',
    message: 'Method not allowed.',
    meaning: 'The path exists, but not with this method; `Allow` lists the methods it has.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    trpc: 'TIMEOUT',
    message: 'The request took too long to arrive.',
    meaning: 'The request took longer than `REQUEST_TIMEOUT` to arrive (or its headers longer than `HEADERS_TIMEOUT`).',
  },
  CONFLICT: {
    status: 409,
    trpc: 'CONFLICT',
    message: 'This conflicts with the current state.',
    meaning: 'The change conflicts with the current state, e.g. setting up an authenticator while one is on.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    trpc: 'PAYLOAD_TOO_LARGE',
    message: 'The request body is too large.',
    meaning: 'The body is over 16 KiB (API, tRPC), 8 KiB (page forms) or 1 MiB (webhooks); the message names the limit. Answered at once; the connection is closed.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    trpc: 'UNSUPPORTED_MEDIA_TYPE',
    message: 'The request body must be application/json.',
    meaning: 'The body is not `application/json` in UTF-8, or a write by the `svc_token` cookie alone is not sent as JSON.',
  },
  RATE_LIMITED: {
    status: 429,
    trpc: 'TOO_MANY_REQUESTS',
    message: 'Too many requests; try again later.',
    meaning: 'A rate limit was reached; `Retry-After` says how many seconds to wait.',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    trpc: 'BAD_REQUEST',
    message: 'The request headers are too large.',
    meaning: "The request headers are over Node's limit.",
  },
  INTERNAL_ERROR: {
    status: 500,
    trpc: 'INTERNAL_SERVER_ERROR',
    message: 'Something went wrong on our side.',
    meaning: 'An unexpected failure. The body carries no detail; the log has it under the request id.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    trpc: 'SERVICE_UNAVAILABLE',
    message: 'The service is temporarily unavailable; try again later.',
    meaning: "The database cannot be reached (with `Retry-After`), or (webhooks) the endpoint's secret is not configured.",
  },
} as const satisfies Record<string, ErrorRow>;

export type ErrorCode = keyof typeof ERRORS;

/** Every code, in the table's order. */
export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];

/** A field the request got wrong (`(body)` for the request as a whole), and what is wrong with it. */
export type ErrorIssue = { path: string; message: string };

export const WHOLE_REQUEST = '(body)';

/**
 * The issues as one sentence a person reads: "password is required; email must be a bare
 * e-mail address (local@domain)." Each issue's own message is the end of such a sentence,
 * which is also how the pages put it under a field's label. Field names keep their case:
 * they are what the caller must send.
 */
export function describeIssues(issues: ErrorIssue[]): string {
  const parts = issues.map((issue) => `${issue.path === WHOLE_REQUEST ? 'the request' : issue.path} ${issue.message}`);
  const text = parts.join('; ');
  return `${text.startsWith('the request') ? 'T' + text.slice(1) : text}.`;
}

/** The generic code of an HTTP status (the first in the table), INTERNAL_ERROR if none. */
export function codeForStatus(status: number): ErrorCode {
  return ERROR_CODES.find((code) => ERRORS[code].status === status) ?? 'INTERNAL_ERROR';
}

/**
 * Fields an error body carries beside code and message, for the caller to act on: the
 * `mfa_token` and `methods` of MFA_REQUIRED, the `methods` of STEP_UP_REQUIRED, the
 * `reauth_url` of REAUTH_REQUIRED. Never a
 * secret of the server's, and never on a 5xx.
 */
export type ErrorDetails = { mfa_token?: string; methods?: string[]; reauth_url?: string };

export type ErrorExtra = { issues?: ErrorIssue[]; retryAfterSeconds?: number; details?: ErrorDetails };

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly extra: ErrorExtra = {},
  ) {
    super(message ?? (extra.issues?.length ? describeIssues(extra.issues) : ERRORS[code].message));
    this.name = 'AppError';
    this.status = ERRORS[code].status;
  }
}

/** 16384 as "16 KiB", 1048576 as "1 MiB": as the limits are written in the docs. */
function byteSize(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** A 413 names the limit, so the caller knows how much to cut. */
export function tooLargeMessage(limitBytes: number): string {
  return `The request body is over the limit of ${byteSize(limitBytes)}.`;
}

export type ErrorBody = { success: false; code: ErrorCode; message: string; issues?: ErrorIssue[] } & ErrorDetails;

/** The one error body of every REST and webhook route; 5xx never carry internal detail. */
export function errorBody(code: ErrorCode, message?: string, issues?: ErrorIssue[], details?: ErrorDetails): ErrorBody {
  if (ERRORS[code].status >= 500) return { success: false, code, message: ERRORS[code].message };
  const body: ErrorBody = { ...details, success: false, code, message: message ?? ERRORS[code].message };
  if (issues?.length) body.issues = issues;
  return body;
}

/**
 * One issue a field, the first zod found (a value of the wrong type is not also "too short");
 * each unknown field is an issue of its own, named by its path.
 */
export function zodIssues(error: ZodError): ErrorIssue[] {
  const byPath = new Map<string, ErrorIssue>();
  for (const issue of error.issues) {
    const found =
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({ path: [...issue.path, key].join('.'), message: UNKNOWN_FIELD }))
        : [{ path: issue.path.join('.') || WHOLE_REQUEST, message: issue.message }];
    for (const one of found) if (!byPath.has(one.path)) byPath.set(one.path, one);
  }
  return [...byPath.values()];
}
