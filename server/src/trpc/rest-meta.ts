import { z } from 'zod';
import type { ProcedureMeta } from './procedures.ts';

export type RestRoute = {
  /** The error statuses this route answers with (docs/API.md, REST reference), for the OpenAPI document. */
  errors: Record<number, string>;
  protect?: boolean;
  successStatus?: number;
  /** Open to an account that MFA_REQUIRED_ROLES holds back until it has a second factor (/me, /mfa*, /logout, /sessions*). */
  beforeMfaSetup?: boolean;
  /** More than the summary says, in Markdown: the OpenAPI document and docs/API.md show it under the route. */
  description?: string;
  responseHeaders?: z.ZodObject;
};

// Statuses the gateway adds to a route's own: a refused body (routes with one), a database away (all).
const BODY_ERRORS: Record<number, string> = { 413: 'The body is over 16 KiB', 415: 'The body is not application/json' };
const UNAVAILABLE: Record<number, string> = { 503: 'The database cannot be reached; try again after Retry-After' };
// A protected write by the svc_token cookie alone must come from PUBLIC_URL or CORS_ORIGINS, as JSON.
const CROSS_SITE: Record<number, string> = {
  403: 'FORBIDDEN: the svc_token cookie was sent from another site (Bearer calls are not affected)',
  415: 'With the svc_token cookie alone, the request must be sent as application/json, even without a body',
};

// MFA_REQUIRED_ROLES holds such an account back everywhere but the routes that set a factor up.
const MFA_SETUP: Record<number, string> = {
  403: "MFA_SETUP_REQUIRED: the account's role is in MFA_REQUIRED_ROLES and it has no second factor yet",
};

/** Tables of statuses in one: a status in several says each thing it may mean. */
function mergeErrors(...tables: Array<Record<number, string>>): Record<number, string> {
  const merged: Record<number, string> = {};
  for (const table of tables) {
    for (const [status, text] of Object.entries(table)) merged[Number(status)] = merged[Number(status)] ? `${merged[Number(status)]}; or ${text}` : text;
  }
  return merged;
}

/**
 * A procedure's REST route under /api/v1, with every status it can answer with. `path` is
 * relative to /api/v1 (`/auth/login`); its first segment is the route's tag.
 */
export function restRoute(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: `/${string}`, summary: string, route: RestRoute): ProcedureMeta {
  const writes = method !== 'GET';
  return {
    successStatus: route.successStatus,
    beforeMfaSetup: route.beforeMfaSetup,
    openapi: {
      method,
      path,
      tags: [path.split('/')[1]],
      summary,
      description: route.description,
      protect: route.protect ?? false,
      errorResponses: mergeErrors(
        method === 'POST' || method === 'PATCH' ? BODY_ERRORS : {},
        writes && route.protect ? CROSS_SITE : {},
        route.errors,
        route.protect && !route.beforeMfaSetup ? MFA_SETUP : {},
        UNAVAILABLE,
      ),
      responseHeaders: route.responseHeaders,
    },
  };
}

export const setCookieHeader = (description: string) => z.object({ 'Set-Cookie': z.string().describe(description) });

/** The REST route of an auth.* procedure, under /api/v1/auth (`path` without the /auth/). */
export const authRoute = (method: 'GET' | 'POST' | 'DELETE', path: string, summary: string, route: RestRoute) => restRoute(method, `/auth/${path}`, summary, route);

/** What the auth.* routes say of the failures they share (docs/API.md, REST reference). */
export const AUTH_ROUTE_ERRORS = {
  noCredentials: 'No valid JWT, API key or cookie',
  wrongPassword: 'INVALID_CREDENTIALS: the password is wrong (it counts as a failed login)',
  invalidBody: 'A field is missing or invalid (see issues), or the body is not JSON',
} as const;
