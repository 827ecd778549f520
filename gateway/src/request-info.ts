import type { Context as KoaContext, Next } from 'koa';
import type { Config, RequestInfo } from '../../server/src/index.ts';
import { headerText } from './http.ts';
import { browserWriteOf, trustedOrigins } from './origins.ts';

/**
 * What a procedure's context needs to know of the request besides its credentials, seen
 * once, before any route runs: who sent it (ip, user agent), its id, and for a write that a
 * browser could have sent, where it came from and whether it is JSON (read before REST names
 * an empty body JSON). REST, tRPC and the pages hand this very object to the procedures, and
 * the access log reads the account a procedure authenticated from it (http.ts).
 */
export function describeRequest(config: Config) {
  const trusted = trustedOrigins(config);
  return (ctx: KoaContext, next: Next) => {
    const info: RequestInfo = {
      ip: ctx.ip,
      userAgent: headerText(ctx.get('user-agent')) || undefined,
      requestId: ctx.state.requestId,
      browserWrite: browserWriteOf(ctx, trusted),
    };
    ctx.state.requestInfo = info;
    return next();
  };
}

/** The request as describeRequest saw it. */
export const requestInfoOf = (ctx: KoaContext): RequestInfo => ctx.state.requestInfo;
