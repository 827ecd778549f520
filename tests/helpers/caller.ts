import { toErrorResponse } from '../../server/src/errors/response.ts';
import type { Credentials, RequestInfo } from '../../server/src/lib/request.ts';
import { appRouter } from '../../server/src/router.ts';
import { createContextInner } from '../../server/src/trpc/context.ts';
import { credentialsFromHeaders } from '../../gateway/src/procedure-context.ts';
import { createCallerFactory } from '../../server/src/trpc/procedures.ts';
import { PASSWORD } from './auth.ts';
import { refuseUndeclaredCallError } from './declared-errors.ts';
import type { HttpResult, TestService } from './service.ts';

// Procedures called in process, as the pages and the bench call them: a rule of a procedure is
// tested here without HTTP (docs/ARCHITECTURE.md, Where to add …). The caller runs on the service's own
// Deps (its database, mail server and test clock), with the credentials and request facts the
// gateway would have read from a request.

const createCaller = createCallerFactory(appRouter);

export type Caller = ReturnType<typeof createCaller>;

/**
 * A caller as `credentials` (none: a visitor), from `ip` unless the request says otherwise.
 * Its refusals are held to what each procedure's route declares, as `request()` holds a
 * response (helpers/declared-errors.ts).
 */
export function callerOf(service: Pick<TestService, 'deps'>, credentials: Credentials = {}, request: Partial<RequestInfo> = {}): Caller {
  return declaring(createCaller(createContextInner(service.deps, credentials, { ip: '127.0.0.1', requestId: 'internal', ...request })), []);
}

/** The caller, with each call's refusal checked against its procedure's declared errors (the path is the procedure's name). */
function declaring<T extends object>(target: T, path: string[]): T {
  return new Proxy(target, {
    get: (object, key) => {
      const value = Reflect.get(object, key);
      return typeof key === 'string' && (typeof value === 'function' || (typeof value === 'object' && value !== null)) ? declaring(value, [...path, key]) : value;
    },
    apply: (fn, self, args) =>
      Promise.resolve(Reflect.apply(fn as (...args: unknown[]) => unknown, self, args)).catch((error: unknown) => {
        const { status, code } = toErrorResponse(error);
        refuseUndeclaredCallError(path.join('.'), { status, code });
        throw error;
      }),
  });
}

/** A caller with the credentials these request headers carry (`bearer(…)`, a `cookie`), as the gateway reads them. */
export function callerWith(service: Pick<TestService, 'deps'>, headers: { authorization?: string; cookie?: string } = {}, request: Partial<RequestInfo> = {}): Caller {
  return callerOf(service, credentialsFromHeaders(headers), request);
}

/**
 * A call's answer as REST gives it, for the checks written against responses (`assertError`,
 * `issuePaths`, `.status`): the procedure's output as JSON, or what a refusal maps to (below).
 * A success is a 200: a status a procedure asks the transport for (register's 201) is the
 * REST mapping's, and tested there.
 */
export async function answerOf(call: Promise<unknown>): Promise<HttpResult> {
  const outcome = await settled(call);
  if ('error' in outcome) return mapped(outcome.error);
  const body = JSON.parse(JSON.stringify(outcome.value ?? null));
  return { status: 200, headers: new Headers(), body, text: JSON.stringify(body) };
}

/**
 * What a call that must fail would have answered over REST: its error mapped by the one table
 * (`toErrorResponse`), as an HttpResult, so that `assertError` and `issuePaths` read it as they
 * read a response. A call that succeeds fails the test.
 */
export async function refusal(call: Promise<unknown>): Promise<HttpResult> {
  const outcome = await settled(call);
  if (!('error' in outcome)) throw new Error(`expected a refusal, the call answered ${JSON.stringify(outcome.value)}`);
  return mapped(outcome.error);
}

const settled = (call: Promise<unknown>) =>
  call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

function mapped(error: unknown): HttpResult {
  const { status, headers, body } = toErrorResponse(error);
  return { status, headers: new Headers(headers), body, text: JSON.stringify(body) };
}

// The calls most rule suites make around the one they test, answered as REST would answer them.

type HeaderCredentials = Parameters<typeof callerWith>[1];

/** auth.login in process, with `password` (the accounts' shared one unless given). */
export const loginCall = (service: Pick<TestService, 'deps'>, email: string, password = PASSWORD) => answerOf(callerOf(service).auth.login({ email, password }));

/** auth.me with the credentials these headers carry. */
export const meCall = (service: Pick<TestService, 'deps'>, headers: HeaderCredentials) => answerOf(callerWith(service, headers).auth.me());

/** The events of the account's activity, newest first (auth.listActivity's first page). */
export const activityEvents = async (service: Pick<TestService, 'deps'>, headers: HeaderCredentials): Promise<string[]> =>
  (await callerWith(service, headers).auth.listActivity()).items.map((item) => item.event);
