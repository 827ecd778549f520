import { AUDIT_EXPORT_ERRORS } from '../../gateway/src/routes/audit-export.ts';
import { ERRORS, type ErrorCode } from '../../server/src/errors/errors.ts';
import { appRouter } from '../../server/src/router.ts';
import type { ProcedureMeta } from '../../server/src/trpc/procedures.ts';
import { ROUTE_ERRORS, routeErrors, type ErrorDeclarations } from '../../server/src/trpc/rest-meta.ts';

/**
 * Every answer a suite gets through `request()` (helpers/service.ts) is held to what its
 * route declares (server/src/trpc/rest-meta.ts routeErrors, the OpenAPI document's error
 * answers): an error code that a REST route under /api/v1, or the tRPC call of a procedure
 * that has one, does not declare fails the test that got it. So the whole suite is the test
 * that docs/API.md lists every error a route answers with.
 */

type DeclaredRoute = { method: string; template: string; pattern: RegExp; declared: ErrorDeclarations };

/** What tRPC's transport answers for any procedure, beyond what the procedure does (gateway/src/routes/trpc.ts). */
export const TRPC_TRANSPORT_ERRORS: ErrorDeclarations = {
  ...ROUTE_ERRORS.body,
  VALIDATION_FAILED: 'the input is invalid, put in the URL of a POST, or the batch has more than 16 calls',
  METHOD_NOT_ALLOWED: 'a query sent as a POST, or a mutation as a GET',
};

type Procedures = Record<string, { _def: { meta?: ProcedureMeta } }>;

/** The procedures that have a REST route, by name (`auth.login`), with their meta. */
export function restProcedures(): Array<{ name: string; meta: ProcedureMeta }> {
  return Object.entries(appRouter._def.procedures as unknown as Procedures).flatMap(([name, procedure]) =>
    procedure._def.meta?.openapi ? [{ name, meta: procedure._def.meta }] : [],
  );
}

const templatePattern = (template: string) =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}/?$`, 'i');

let restTable: DeclaredRoute[] | undefined;
let trpcTable: Map<string, { template: string; declared: ErrorDeclarations }> | undefined;

/** Built from the app router once per process: every REST route and the activity export the gateway serves itself. */
function tables() {
  if (!restTable || !trpcTable) {
    const procedures = restProcedures();
    restTable = procedures.map(({ meta }) => ({
      method: meta.openapi!.method,
      template: meta.openapi!.path,
      pattern: templatePattern(meta.openapi!.path),
      declared: routeErrors(meta)!,
    }));
    restTable.push({ method: 'GET', template: '/admin/audit', pattern: templatePattern('/admin/audit'), declared: AUDIT_EXPORT_ERRORS });
    trpcTable = new Map(procedures.map(({ name, meta }) => [name, { template: `${meta.openapi!.method} ${meta.openapi!.path}`, declared: { ...TRPC_TRANSPORT_ERRORS, ...routeErrors(meta) } }]));
  }
  return { rest: restTable, trpc: trpcTable };
}

/** The REST route a request under /api/v1 reaches, if any (a HEAD reaches the GET's). */
export function declaredRoute(method: string, path: string): DeclaredRoute | undefined {
  const under = /^\/api\/v1(\/[^?#]*)/i.exec(path)?.[1];
  if (under === undefined) return undefined;
  const asked = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  return tables().rest.find((route) => route.method === asked && route.pattern.test(under));
}

function refuse(where: string, status: number, code: unknown): never {
  throw new Error(
    `${where} answered ${status} ${String(code)}, a code it does not declare: add it, with when, to the route's errors (server/src/trpc/rest-meta.ts), or fix the answer`,
  );
}

const isCode = (code: unknown): code is ErrorCode => typeof code === 'string' && code in ERRORS;

/** The tRPC calls of a request (`/trpc/auth.login`, or a batch `/trpc/a,b?batch=1`) and the error code each answered, in order. */
function trpcErrors(path: string, body: unknown): Array<{ name: string; code: unknown }> {
  const names = /^\/trpc\/([^?#]+)/.exec(path)?.[1];
  if (!names) return [];
  let calls: string[];
  try {
    calls = decodeURIComponent(names).split(',');
  } catch {
    return [];
  }
  const answers = Array.isArray(body) ? body : [body];
  return calls.flatMap((name, index) => {
    const code = (answers[index] as { error?: { data?: { appCode?: unknown } } } | undefined)?.error?.data?.appCode;
    return code === undefined ? [] : [{ name, code }];
  });
}

/** Throws when the answer carries an error code that its route (or its tRPC procedure's REST route) does not declare. */
export function refuseUndeclaredError(method: string, path: string, answer: { status: number; body: unknown }): void {
  const code = (answer.body as { code?: unknown } | undefined)?.code;
  const route = answer.status >= 400 && code !== undefined ? declaredRoute(method, path) : undefined;
  if (route && !(isCode(code) && route.declared[code] !== undefined)) refuse(`${route.method} /api/v1${route.template}`, answer.status, code);
  // A batch whose calls did not all fail answers 207: each call's error is looked at whatever the status.
  for (const call of trpcErrors(path, answer.body)) refuseUndeclaredCallError(call.name, { status: answer.status, code: call.code });
}

/** Throws when a procedure's call (over tRPC, or in process: helpers/caller.ts) refused with a code its REST route does not declare. */
export function refuseUndeclaredCallError(name: string, answer: { status: number; code: unknown }): void {
  const procedure = tables().trpc.get(name);
  if (procedure && !(isCode(answer.code) && procedure.declared[answer.code] !== undefined)) refuse(`tRPC ${name} (REST ${procedure.template})`, answer.status, answer.code);
}
