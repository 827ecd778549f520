import type { TRPCError } from '@trpc/server';
import { toErrorResponse, type Context } from '../../../server/src/index.ts';
import { takeSessionCookies } from '../procedure-context.ts';

/**
 * For tRPC's responseMeta: what the calls that succeeded asked the transport for (the session's cookies),
 * and the headers the first error answers with (Retry-After, WWW-Authenticate). In a batch
 * both can be wanted: a login's cookie stays on the answer whatever the call beside it did.
 * A request whose every call failed answers as REST does, with the error's headers alone.
 * tRPC sets the status itself, from the code the procedure's error was given (server/src/trpc/procedures.ts, settle).
 */
export function responseHeaders(ctx: Context | undefined, errors: TRPCError[], someSucceeded: boolean): { headers: Record<string, string | string[]> } {
  const headers: Record<string, string | string[]> = errors[0] ? { ...toErrorResponse(errors[0]).headers } : {};
  if (errors.length > 0 && !someSucceeded) return { headers };
  const cookies = ctx ? takeSessionCookies(ctx.deps.config, ctx.response) : [];
  if (cookies.length) headers['set-cookie'] = cookies;
  return { headers };
}
