import type { TRPCError } from '@trpc/server';
import type { Context } from '../../../server/src/context.ts';
import { describeError } from '../../../server/src/trpc.ts';

/**
 * What a procedure asked the transport for (cookies, a 201), plus the headers an error
 * needs: Retry-After for a rate limit, WWW-Authenticate for a 401.
 */
export function responseMetaFor(options: { ctx?: Context; errors: TRPCError[]; useStatus: boolean }) {
  const { ctx, errors, useStatus } = options;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of ctx?.response.headers ?? []) {
    const existing = headers[name];
    headers[name] = existing === undefined ? value : [...[existing].flat(), value];
  }
  const error = errors[0];
  if (error) {
    const { appCode, retryAfterSeconds } = describeError(error);
    if (retryAfterSeconds) headers['retry-after'] = String(retryAfterSeconds);
    if (appCode === 'UNAUTHORIZED') headers['www-authenticate'] = 'Bearer';
    return { headers };
  }
  return { headers, status: useStatus ? ctx?.response.status : undefined };
}
