import { TRPCError } from '@trpc/server';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Deps } from '../server/src/deps.ts';
import { AppError } from '../server/src/errors/errors.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { createContextInner, type Context } from '../server/src/trpc/context.ts';
import { createCallerFactory, guardedProcedure, router } from '../server/src/trpc/procedures.ts';

// guardedProcedure (server/src/trpc/procedures.ts) as every authed, admin and step-up
// procedure uses it: the guard's answer reaches the procedure as `ctx.auth`, through any
// middleware stacked on it, by tRPC's documented `next({ ctx })`; a refusal is the call's
// failure and the procedure never runs. No database: a guard that reads the bearer is all
// it takes.

const deps = { logger: createLogger('silent') } as unknown as Deps;

type Admitted = { account: string; type: string };
let ran = 0;

const guarded = guardedProcedure<Admitted>(async (ctx, call) => {
  if (ctx.credentials.bearer === undefined) throw new AppError('UNAUTHORIZED');
  return { account: ctx.credentials.bearer, type: call.type };
});
const stacked = guarded.use(({ ctx, next }) => next({ ctx: { seenByMiddleware: ctx.auth.account } }));

const procedures = router({
  whoami: stacked.query(({ ctx }) => {
    ran += 1;
    return { auth: ctx.auth, seen: ctx.seenByMiddleware, deps: ctx.deps, requestId: ctx.request.requestId };
  }),
  change: guarded.mutation(({ ctx }) => ctx.auth.type),
});
const callerOf = (context: Context) => createCallerFactory(procedures)(context);

const test = suite("trpc: a guarded procedure hands its guard's answer on as ctx.auth");

test("the guard's answer is ctx.auth in the procedure and in a middleware stacked on it; the rest is the caller's context", async () => {
  const context = createContextInner(deps, { bearer: 'ada' }, { ip: '127.0.0.1', requestId: 'guarded-1' });
  const answer = await callerOf(context).whoami();
  assert.equal(answer.auth, { account: 'ada', type: 'query' });
  assert.is(answer.seen, 'ada');
  assert.is(answer.deps, deps);
  assert.is(answer.requestId, 'guarded-1');
  assert.is(await callerOf(context).change(), 'mutation', 'the guard is told what kind of call it admits');
  assert.not.ok('auth' in context, "the caller's own context object is left as it was");
});

test('calls at once with different credentials each see their own account', async () => {
  const names = ['ada', 'grace', 'edsger', 'barbara'];
  const answers = await Promise.all(names.map((bearer) => callerOf(createContextInner(deps, { bearer })).whoami()));
  assert.equal(
    answers.map((answer) => [answer.auth.account, answer.seen]),
    names.map((name) => [name, name]),
  );
});

test("a refusal is the call's failure, with its code, and the procedure does not run", async () => {
  const before = ran;
  const failure = await callerOf(createContextInner(deps)).whoami().then(
    () => undefined,
    (error: unknown) => error,
  );
  assert.instance(failure, TRPCError);
  assert.is((failure as TRPCError).code, 'UNAUTHORIZED');
  assert.instance((failure as TRPCError).cause, AppError);
  assert.is(ran, before);
});

test.run();
