import type { TRPCError } from '@trpc/server';
import { toErrorResponse, type Context } from '../../../server/src/index.ts';

/**
 * For tRPC's responseMeta: what a procedure asked the transport for (cookies), or the
 * headers its error answers with (Retry-After, WWW-Authenticate). tRPC sets the status
 * itself, from the code the procedure's error was given (trpc.ts).
 */
export function responseHeaders(ctx: Context | undefined, errors: TRPCError[]): { headers: Record<string, string | string[]> } {
  if (errors[0]) return { headers: toErrorResponse(errors[0]).headers };
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of ctx?.response.headers ?? []) {
    const existing = headers[name];
    headers[name] = existing === undefined ? value : [...[existing].flat(), value];
  }
  return { headers };
}
