import type { Context } from './context.ts';

/*
 * Fenced: these two lean on how tRPC 11 runs middlewares (tests/internals.db.test.ts fails
 * loudly when an upgrade changes it). a guarded procedure (procedures.ts) puts the account onto the request's
 * own context object and calls next() with an undefined `ctx`: tRPC reads no override from
 * it, so it does not copy the whole context with the slow spread helper it uses at every
 * level, while procedures still see `ctx.auth`, typed. The calls of a tRPC batch share one
 * context, and with it one set of credentials, so they put the same account there.
 */

export function attachAuth<A>(ctx: Context, auth: A): void {
  (ctx as Context & { auth?: A }).auth = auth;
}

/** What to hand next() as `ctx`: nothing at run time, the added properties' type at compile time. */
export function contextUnchanged<T>(): T {
  return undefined as unknown as T;
}
