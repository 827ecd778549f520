/** The closed list of error codes and the HTTP status each one answers with. */
export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  INVALID_TOKEN: 400,
  INVALID_PAYLOAD: 400,
  INVALID_CREDENTIALS: 401,
  UNAUTHORIZED: 401,
  INVALID_SIGNATURE: 401,
  EMAIL_NOT_VERIFIED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export type ErrorIssue = { path: string; message: string };

const DEFAULT_MESSAGES: Record<ErrorCode, string> = {
  VALIDATION_FAILED: 'The request is not valid.',
  INVALID_JSON: 'The request body is not valid JSON.',
  INVALID_TOKEN: 'The token is invalid, already used or expired.',
  INVALID_PAYLOAD: 'The payload could not be understood.',
  INVALID_CREDENTIALS: 'The e-mail or password is wrong.',
  UNAUTHORIZED: 'Authentication is required.',
  INVALID_SIGNATURE: 'The signature is missing or wrong.',
  EMAIL_NOT_VERIFIED: 'The e-mail address has not been verified yet.',
  NOT_FOUND: 'Not found.',
  METHOD_NOT_ALLOWED: 'Method not allowed.',
  PAYLOAD_TOO_LARGE: 'The request body is too large.',
  UNSUPPORTED_MEDIA_TYPE: 'The request body must be application/json.',
  RATE_LIMITED: 'Too many requests; try again later.',
  INTERNAL_ERROR: 'Something went wrong on our side.',
  SERVICE_UNAVAILABLE: 'The service is temporarily unavailable; try again later.',
};

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly extra: { issues?: ErrorIssue[]; retryAfterSeconds?: number } = {},
  ) {
    super(message ?? DEFAULT_MESSAGES[code]);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }
}

export type ErrorBody = { success: false; code: ErrorCode; message: string; issues?: ErrorIssue[] };

/** The one error body of every REST and webhook route; 5xx never carry internal detail. */
export function errorBody(code: ErrorCode, message?: string, issues?: ErrorIssue[]): ErrorBody {
  const safeMessage = ERROR_STATUS[code] >= 500 ? DEFAULT_MESSAGES[code] : (message ?? DEFAULT_MESSAGES[code]);
  return issues?.length ? { success: false, code, message: safeMessage, issues } : { success: false, code, message: safeMessage };
}
