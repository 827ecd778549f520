import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../errors/errors.ts';
import type { ProcedureMeta } from './procedures.ts';

/**
 * Error codes a route answers with, each with when: the end of a sentence ("the token is
 * unknown, used or expired"). The OpenAPI document groups them by status (docs/API.md,
 * REST reference), and the test harness refuses any answer whose code its route does not declare.
 */
export type ErrorDeclarations = Partial<Record<ErrorCode, string>>;

export type RestRoute = {
  /** The codes this route's procedure answers with beyond those of its kind (routeErrors), each with when. */
  errors?: ErrorDeclarations;
  protect?: boolean;
  /** With a second factor on, the body must carry its proof as well (mfa.step-up.ts requireStepUp). */
  stepUp?: boolean;
  successStatus?: number;
  /** Open to an account that MFA_REQUIRED_ROLES holds back until it has a second factor (/me, /mfa*, /logout, /sessions*). */
  beforeMfaSetup?: boolean;
  /** More than the summary says, in Markdown: the OpenAPI document and docs/API.md show it under the route. */
  description?: string;
  responseHeaders?: z.ZodObject;
};

/** What routes of one kind answer without saying so, shared by every route of that kind (routeErrors). */
export const ROUTE_ERRORS = {
  /** The gateway, before any route: Node's parser and timeouts, the path and header check, the database. */
  everyRoute: {
    VALIDATION_FAILED: 'the path or a header value holds a control character, or the request cannot be parsed',
    REQUEST_TIMEOUT: 'the request took longer than `REQUEST_TIMEOUT` to arrive (its headers longer than `HEADERS_TIMEOUT`); the connection is closed',
    HEADERS_TOO_LARGE: "the request headers are over Node's limit; the connection is closed",
    INTERNAL_ERROR: 'an unexpected failure on our side; the body carries no detail (the log has it, under the request id)',
    SERVICE_UNAVAILABLE: 'the database cannot be reached; try again after `Retry-After`',
  },
  /** Any method but GET: the gateway reads a JSON body of at most 16 KiB (routes/rest.ts). */
  body: {
    VALIDATION_FAILED: 'a field is missing, invalid or not one of the route\'s (see `issues`), or the body is not a JSON object',
    INVALID_JSON: 'the body is not valid JSON, or not UTF-8',
    PAYLOAD_TOO_LARGE: 'the body is over 16 KiB: answered at once and the connection closed',
    UNSUPPORTED_MEDIA_TYPE: 'the body is not `application/json`',
  },
  credentials: { UNAUTHORIZED: 'no valid JWT, API key or cookie (with `WWW-Authenticate: Bearer`)' },
  /** A protected write by the svc_token cookie alone must come from PUBLIC_URL or CORS_ORIGINS, as JSON. */
  cookieWrite: {
    FORBIDDEN: 'the `svc_token` cookie alone was sent from another site (Bearer calls are not affected)',
    UNSUPPORTED_MEDIA_TYPE: 'with the `svc_token` cookie alone, the request must be sent as `application/json`, even without a body',
  },
  /** MFA_REQUIRED_ROLES holds such an account back everywhere but the routes that set a factor up. */
  mfaSetup: { MFA_SETUP_REQUIRED: "the account's role is in `MFA_REQUIRED_ROLES` and it has no second factor yet" },
  admin: { FORBIDDEN: 'the account is not an administrator' },
  stepUp: {
    STEP_UP_REQUIRED:
      'the account has a second factor and the body carries no `code` or `response`: by API key every time, by a session unless it gave one in the last 5 minutes (`methods` names the ways the account has)',
    INVALID_CODE: 'the `code` or `response` is wrong, already used or expired (it counts as a failed login)',
    RATE_LIMITED: 'too many sign-in attempts from this client, or failed logins of this account (a step-up proof counts as one)',
  },
} as const satisfies Record<string, ErrorDeclarations>;

/** What a route that asks for the current password in `field` answers (passwordConfirmingProcedure, passwords.check.ts). */
export function passwordErrors(field: string): ErrorDeclarations {
  return {
    INVALID_CREDENTIALS: `\`${field}\` is wrong (it counts as a failed login)`,
    REAUTH_REQUIRED:
      `the account has no password (it was made through an identity provider, and leaves \`${field}\` out), and this is not a session ` +
      'begun through one of its providers in the last 10 minutes: `reauth_url` starts such a sign-in',
    RATE_LIMITED: 'too many password checks by this session (by API key: for this account)',
  };
}

/** What a route that sets a password says when the policy refuses it (passwords.policy.ts). */
export const weakPassword = (field: string) =>
  `\`${field}\` is among the most common passwords, contains the account's e-mail local part or name, or (with \`BREACHED_PASSWORD_CHECK=hibp\`) is in a known breach (issue path \`${field}\`)`;

/** Tables in one, in the closed list's order: a code in several says each thing it may mean. */
export function mergeErrors(...tables: ErrorDeclarations[]): ErrorDeclarations {
  const merged: ErrorDeclarations = {};
  for (const code of ERROR_CODES) {
    const whens = [...new Set(tables.flatMap((table) => (table[code] === undefined ? [] : [table[code]])))];
    if (whens.length) merged[code] = whens.join('; or ');
  }
  return merged;
}

/** What routeErrors reads of a route: its REST meta, or as much of it as a route the gateway serves itself has. */
export type RouteKind = Pick<ProcedureMeta, 'errors' | 'beforeMfaSetup' | 'stepUp' | 'passwordField' | 'adminOnly'> & {
  openapi?: { method: string; protect?: boolean };
};

/**
 * Every code a REST route answers with, each with when: those of its kind (every route; a
 * body; credentials; a write by cookie; a role held back until it has a second factor; an
 * administrator's; a password to confirm; step-up) and the route's own. Undefined for a
 * procedure without a REST route.
 */
export function routeErrors(meta: RouteKind | undefined): ErrorDeclarations | undefined {
  const route = meta?.openapi;
  if (!route) return undefined;
  const writes = route.method !== 'GET';
  const isProtected = route.protect ?? false;
  // In the order a code's meanings are read: the common ones of the route's body and
  // credentials, then what is the route's own, then the rarer ones of every route.
  return mergeErrors(
    writes ? ROUTE_ERRORS.body : {},
    isProtected ? ROUTE_ERRORS.credentials : {},
    meta.errors ?? {},
    meta.adminOnly ? ROUTE_ERRORS.admin : {},
    meta.passwordField ? passwordErrors(meta.passwordField) : {},
    meta.stepUp ? ROUTE_ERRORS.stepUp : {},
    isProtected && writes ? ROUTE_ERRORS.cookieWrite : {},
    isProtected && !meta.beforeMfaSetup ? ROUTE_ERRORS.mfaSetup : {},
    ROUTE_ERRORS.everyRoute,
  );
}

/**
 * A procedure's REST route under /api/v1. `path` is relative to /api/v1 (`/auth/login`); its
 * first segment is the route's tag. `errors` are the codes it answers with beyond those of its
 * kind (routeErrors).
 */
export function restRoute(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: `/${string}`, summary: string, route: RestRoute): ProcedureMeta {
  return {
    successStatus: route.successStatus,
    beforeMfaSetup: route.beforeMfaSetup,
    stepUp: route.stepUp,
    errors: route.errors ?? {},
    openapi: {
      method,
      path,
      tags: [path.split('/')[1]],
      summary,
      description: route.description,
      protect: route.protect ?? false,
      responseHeaders: route.responseHeaders,
    },
  };
}

export const setCookieHeader = (description: string) => z.object({ 'Set-Cookie': z.string().describe(description) });

/** The REST route of an auth.* procedure, under /api/v1/auth (`path` without the /auth/). */
export const authRoute = (method: 'GET' | 'POST' | 'DELETE', path: string, summary: string, route: RestRoute) => restRoute(method, `/auth/${path}`, summary, route);
