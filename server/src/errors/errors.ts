/**
 * The closed list of error codes and the HTTP status each one answers with: the only such
 * table. Within a status the first code is the generic one (`codeForStatus`).
 */
export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  INVALID_TOKEN: 400,
  INVALID_PAYLOAD: 400,
  INVALID_CODE: 400,
  UNAUTHORIZED: 401,
  INVALID_CREDENTIALS: 401,
  INVALID_SIGNATURE: 401,
  FORBIDDEN: 403,
  EMAIL_NOT_VERIFIED: 403,
  MFA_REQUIRED: 403,
  STEP_UP_REQUIRED: 403,
  MFA_SETUP_REQUIRED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

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

const DEFAULT_MESSAGES: Record<ErrorCode, string> = {
  VALIDATION_FAILED: 'The request is not valid.',
  INVALID_JSON: 'The request body is not valid JSON.',
  INVALID_TOKEN: 'The token is invalid, already used or expired.',
  INVALID_PAYLOAD: 'The payload could not be understood.',
  INVALID_CODE: 'The code is wrong, already used or expired.',
  UNAUTHORIZED: 'Authentication is required.',
  INVALID_CREDENTIALS: 'The e-mail or password is wrong.',
  INVALID_SIGNATURE: 'The signature is missing or wrong.',
  FORBIDDEN: 'This request is not allowed.',
  EMAIL_NOT_VERIFIED: 'The e-mail address has not been verified yet.',
  MFA_REQUIRED: 'The password is right; now give the code from your authenticator, a recovery code or a passkey.',
  STEP_UP_REQUIRED: 'Confirm it is you with your second factor first.',
  MFA_SETUP_REQUIRED: 'Your account must turn on a second factor before it can do this.',
  NOT_FOUND: 'Not found.',
  METHOD_NOT_ALLOWED: 'Method not allowed.',
  REQUEST_TIMEOUT: 'The request took too long to arrive.',
  CONFLICT: 'This conflicts with the current state.',
  PAYLOAD_TOO_LARGE: 'The request body is too large.',
  UNSUPPORTED_MEDIA_TYPE: 'The request body must be application/json.',
  RATE_LIMITED: 'Too many requests; try again later.',
  HEADERS_TOO_LARGE: 'The request headers are too large.',
  INTERNAL_ERROR: 'Something went wrong on our side.',
  SERVICE_UNAVAILABLE: 'The service is temporarily unavailable; try again later.',
};

/** The generic code of an HTTP status (the first in ERROR_STATUS), INTERNAL_ERROR if none. */
export function codeForStatus(status: number): ErrorCode {
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).find((code) => ERROR_STATUS[code] === status) ?? 'INTERNAL_ERROR';
}

/**
 * Fields an error body carries beside code and message, for the caller to act on: the
 * `mfa_token` and `methods` of MFA_REQUIRED, the `methods` of STEP_UP_REQUIRED. Never a
 * secret of the server's, and never on a 5xx.
 */
export type ErrorDetails = { mfa_token?: string; methods?: string[] };

export type ErrorExtra = { issues?: ErrorIssue[]; retryAfterSeconds?: number; details?: ErrorDetails };

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly extra: ErrorExtra = {},
  ) {
    super(message ?? (extra.issues?.length ? describeIssues(extra.issues) : DEFAULT_MESSAGES[code]));
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
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
  if (ERROR_STATUS[code] >= 500) return { success: false, code, message: DEFAULT_MESSAGES[code] };
  const body: ErrorBody = { ...details, success: false, code, message: message ?? DEFAULT_MESSAGES[code] };
  if (issues?.length) body.issues = issues;
  return body;
}
