import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { AUDIT_EXPORT_ERRORS, withAuditExportRoute } from '../gateway/src/routes/audit-export.ts';
import { CODES_EXTENSION, createOpenApiDocument, PASSWORD_LEFT_OUT, WEBHOOK_ONLY } from '../gateway/src/routes/openapi-document.ts';
import { ERRORS, type ErrorCode } from '../server/src/errors/errors.ts';
import { appRouter } from '../server/src/router.ts';
import { mergeErrors, passwordErrors, ROUTE_ERRORS, routeErrors, type ErrorDeclarations } from '../server/src/trpc/rest-meta.ts';
import { declaredRoute, refuseUndeclaredError, restProcedures } from './helpers/declared-errors.ts';

// The table of what each REST route declares it answers with when it fails: every code is
// one of the closed list, every route has the codes its kind implies, and the OpenAPI
// document's error answers are exactly the declarations. No service: the suite's HTTP tests
// hold every answer to this table (helpers/declared-errors.ts).

const test = suite('declared errors: every REST route, its kind, and the OpenAPI answers built from them');

type Definition = { type: 'query' | 'mutation'; inputs: z.ZodType[] };
const definitions = appRouter._def.procedures as unknown as Record<string, { _def: Definition }>;
const routes = restProcedures().map(({ name, meta }) => ({ name, meta, declared: routeErrors(meta)!, definition: definitions[name]._def }));
const where = (route: { meta: { openapi?: { method: string; path: string } } }) => `${route.meta.openapi!.method} ${route.meta.openapi!.path}`;

/** The fields of a procedure's input, whatever wraps its object (optional, prefault). */
function inputFields(definition: Definition): string[] {
  const schema = definition.inputs[0];
  if (!schema) return [];
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: object; anyOf?: Array<{ properties?: object }> };
  return Object.keys(json.properties ?? json.anyOf?.find((option) => option.properties)?.properties ?? {});
}

test('every declared code is one of the closed list, said with when, and never one only the webhooks give', () => {
  assert.ok(routes.length > 40, `${routes.length} routes`);
  for (const { declared, ...route } of [...routes, { meta: { openapi: { method: 'GET', path: '/admin/audit' } }, declared: AUDIT_EXPORT_ERRORS }]) {
    for (const [code, when] of Object.entries(declared)) {
      assert.ok(code in ERRORS, `${where(route)}: ${code} is not in ERRORS`);
      assert.not.ok(WEBHOOK_ONLY.includes(code as ErrorCode), `${where(route)}: ${code} is the webhooks'`);
      assert.ok(typeof when === 'string' && when.length > 10 && !when.endsWith('.'), `${where(route)}: ${code} says when, as a sentence's end: ${when}`);
    }
  }
});

test("every route has the codes of its kind: every route's, a body's, credentials', a cookie write's, MFA_REQUIRED_ROLES', an admin's", () => {
  const has = (route: (typeof routes)[number], table: ErrorDeclarations, kind: string) => {
    for (const code of Object.keys(table)) assert.ok(route.declared[code as ErrorCode], `${where(route)} (${kind}) lacks ${code}`);
  };
  for (const route of routes) {
    const { method, protect, path } = route.meta.openapi!;
    has(route, ROUTE_ERRORS.everyRoute, 'every route');
    // The REST method and the procedure's kind agree, so the cookie's write checks (mutations) are declared where they apply.
    assert.is(route.definition.type, method === 'GET' ? 'query' : 'mutation', where(route));
    if (method !== 'GET') has(route, ROUTE_ERRORS.body, 'a body');
    else for (const code of ['INVALID_JSON', 'PAYLOAD_TOO_LARGE'] as const) assert.not.ok(route.declared[code], `${where(route)}: a GET reads no body`);
    if (protect) has(route, ROUTE_ERRORS.credentials, 'credentials');
    else assert.not.ok(route.declared.UNAUTHORIZED, `${where(route)}: public, yet declares UNAUTHORIZED`);
    if (protect && method !== 'GET') has(route, ROUTE_ERRORS.cookieWrite, 'a write by cookie');
    assert.is(Boolean(route.declared.MFA_SETUP_REQUIRED), Boolean(protect && !route.meta.beforeMfaSetup), `${where(route)}: MFA_SETUP_REQUIRED`);
    // adminProcedure marks its procedures; every route under /admin is one.
    assert.is(Boolean(route.meta.adminOnly), path.startsWith('/admin/'), `${where(route)}: an admin's route`);
    if (route.meta.adminOnly) has(route, ROUTE_ERRORS.admin, 'an admin');
  }
});

test("a route that confirms a password declares a password's codes and has the field; one that steps up, step-up's and the proof's fields", () => {
  const confirming = routes.filter((route) => route.meta.passwordField);
  const steppingUp = routes.filter((route) => route.meta.stepUp);
  assert.ok(confirming.length >= 9, `${confirming.length} routes confirm a password`);
  for (const route of confirming) {
    for (const code of Object.keys(passwordErrors('x'))) assert.ok(route.declared[code as ErrorCode], `${where(route)} lacks ${code}`);
    assert.ok(inputFields(route.definition).includes(route.meta.passwordField!), `${where(route)} has no field ${route.meta.passwordField}`);
  }
  // Section 11's list: every change that needs the step-up proof, by session and by API key.
  assert.equal(steppingUp.map((route) => route.name).sort(), [
    'auth.changeEmail',
    'auth.changePassword',
    'auth.deleteAccount',
    'auth.linkIdentity',
    'auth.passkeyOptions',
    'auth.removePasskey',
    'auth.rotateApiKey',
    'auth.setupTotp',
    'auth.unlinkIdentity',
  ]);
  for (const route of steppingUp) {
    for (const code of Object.keys(ROUTE_ERRORS.stepUp)) assert.ok(route.declared[code as ErrorCode], `${where(route)} lacks ${code}`);
    for (const field of ['code', 'response']) assert.ok(inputFields(route.definition).includes(field), `${where(route)} has no field ${field}`);
  }
});

test("the OpenAPI document's error answers are exactly the declarations: a status each, its codes in the enum, its description and x-error-codes", () => {
  const document = withAuditExportRoute(createOpenApiDocument('http://localhost:3000', '/api/v1'));
  const declaredByRoute = new Map<string, ErrorDeclarations>([...routes.map((route) => [where(route), route.declared] as const), ['GET /admin/audit', AUDIT_EXPORT_ERRORS]]);
  let operations = 0;
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, any>)) {
      const declared = declaredByRoute.get(`${method.toUpperCase()} ${path}`);
      assert.ok(declared, `${method} ${path} is a route with declarations`);
      operations++;
      const answers = Object.entries(operation.responses as Record<string, any>).filter(([status]) => Number(status) >= 400);
      const statuses = [...new Set(Object.keys(declared).map((code) => String(ERRORS[code as ErrorCode].status)))].sort();
      assert.equal(answers.map(([status]) => status).sort(), statuses, `${method} ${path}: the error statuses`);
      for (const [status, answer] of answers) {
        const codes = Object.keys(declared).filter((code) => String(ERRORS[code as ErrorCode].status) === status);
        assert.equal([...answer.content['application/json'].schema.allOf[1].properties.code.enum].sort(), codes.sort(), `${method} ${path} ${status}: the code enum`);
        assert.equal(answer[CODES_EXTENSION], Object.fromEntries(codes.map((code) => [code, declared[code as ErrorCode]])), `${method} ${path} ${status}: ${CODES_EXTENSION}`);
        for (const code of codes) assert.ok(answer.description.includes(`\`${code}\`: ${declared[code as ErrorCode]}`), `${method} ${path} ${status}: the description says ${code}`);
        assert.is(Boolean(answer.headers?.['Retry-After']), codes.includes('RATE_LIMITED') || codes.includes('SERVICE_UNAVAILABLE'), `${method} ${path} ${status}: Retry-After`);
        assert.is(Boolean(answer.headers?.['WWW-Authenticate']), codes.includes('UNAUTHORIZED'), `${method} ${path} ${status}: WWW-Authenticate`);
      }
    }
  }
  assert.is(operations, declaredByRoute.size);
});

test("a confirming password is required in the document's request body, with the note for accounts without one; optional in the procedure's schema", () => {
  const document = createOpenApiDocument('http://localhost:3000', '/api/v1');
  for (const route of routes.filter((one) => one.meta.passwordField)) {
    const { method, path } = route.meta.openapi!;
    const body = (document.paths as any)[path][method.toLowerCase()].requestBody.content['application/json'].schema;
    const field = route.meta.passwordField!;
    assert.ok(body.required.includes(field), `${where(route)}: ${field} is required`);
    assert.ok(body.properties[field].description.endsWith(PASSWORD_LEFT_OUT), `${where(route)}: ${field} has the note`);
    assert.ok((route.definition.inputs[0].safeParse({}).error?.issues ?? []).every((issue) => issue.path[0] !== field), `${where(route)}: ${field} is optional in the schema`);
  }
});

test("a code several kinds declare says each meaning once, in the tables' order", () => {
  assert.equal(mergeErrors({ RATE_LIMITED: 'a' }, { RATE_LIMITED: 'b', CONFLICT: 'c' }, { RATE_LIMITED: 'a' }), { CONFLICT: 'c', RATE_LIMITED: 'a; or b' });
  assert.is(routeErrors({ errors: {} }), undefined, 'no REST route, no declarations');
});

test("the harness's check finds the route of a request, and refuses a code it does not declare, over REST and tRPC", () => {
  assert.is(declaredRoute('POST', '/api/v1/auth/logout')?.template, '/auth/logout');
  assert.is(declaredRoute('HEAD', '/API/V1/auth/sessions/0190c7a4-7d0e-7000-8000-000000000000?x=1')?.template, undefined, 'no HEAD of a DELETE');
  assert.is(declaredRoute('DELETE', '/API/V1/auth/sessions/0190c7a4-7d0e-7000-8000-000000000000?x=1')?.template, '/auth/sessions/{id}');
  assert.is(declaredRoute('HEAD', '/api/v1/auth/me')?.template, '/auth/me');
  assert.is(declaredRoute('GET', '/api/v1/admin/audit?since=x')?.template, '/admin/audit');
  assert.is(declaredRoute('PUT', '/api/v1/auth/logout'), undefined, 'no such route: a 405 is no route\'s');
  assert.is(declaredRoute('GET', '/pages/account'), undefined);

  refuseUndeclaredError('POST', '/api/v1/auth/logout', { status: 400, body: { code: 'INVALID_JSON' } });
  assert.throws(() => refuseUndeclaredError('POST', '/api/v1/auth/logout', { status: 409, body: { code: 'CONFLICT' } }), /POST \/api\/v1\/auth\/logout answered 409 CONFLICT/);
  assert.throws(() => refuseUndeclaredError('GET', '/api/v1/auth/me', { status: 400, body: { code: 'NO_SUCH_CODE' } }), /GET \/api\/v1\/auth\/me answered 400 NO_SUCH_CODE/);
  // Any other path, or an answer without an error code, is not looked at.
  refuseUndeclaredError('GET', '/account', { status: 409, body: { code: 'CONFLICT' } });
  refuseUndeclaredError('POST', '/api/v1/auth/logout', { status: 200, body: { success: true } });

  const trpcError = (appCode: string) => ({ error: { data: { appCode } } });
  refuseUndeclaredError('POST', '/trpc/auth.logout', { status: 405, body: trpcError('METHOD_NOT_ALLOWED') });
  assert.throws(() => refuseUndeclaredError('POST', '/trpc/auth.logout', { status: 409, body: trpcError('CONFLICT') }), /tRPC auth\.logout .*409 CONFLICT/);
  // In a batch, each call is held to its own procedure, whatever the answer's status.
  assert.throws(
    () => refuseUndeclaredError('POST', '/trpc/auth.me,auth.logout?batch=1', { status: 207, body: [{ result: {} }, trpcError('CONFLICT')] }),
    /tRPC auth\.logout/,
  );
  // A procedure without a REST route has no declarations to hold it to.
  refuseUndeclaredError('POST', '/trpc/sites.create', { status: 409, body: trpcError('CONFLICT') });
});

test.run();
