import type { OpenAPIObject } from 'openapi3-ts/oas31';
import { z } from 'zod';
import { withAuditExportRoute } from '../../gateway/src/routes/audit-export.ts';
import { CODES_EXTENSION, createOpenApiDocument } from '../../gateway/src/routes/openapi-document.ts';
import { ERROR_CODES, ERRORS, type ErrorCode } from '../../server/src/errors/errors.ts';
import { appRouter, AUTH_RATE_RULES } from '../../server/src/router.ts';
import type { ProcedureMeta } from '../../server/src/trpc/procedures.ts';
import { ROUTE_ERRORS } from '../../server/src/trpc/rest-meta.ts';
import { code, headingAnchor, inputTable, outputTable, shapeText, sourceNote, table, type JsonSchema } from './markdown.ts';

/** Where the REST routes are mounted (gateway/src/routes/rest.ts). */
export const API_PREFIX = '/api/v1';

type Loose = Record<string, any>;
type Procedure = { path: string; type: 'query' | 'mutation'; meta?: ProcedureMeta; input?: z.ZodType; output?: z.ZodType };

export function procedures(): Procedure[] {
  const all = appRouter._def.procedures as unknown as Record<string, { _def: { type: Procedure['type']; meta?: ProcedureMeta; inputs: z.ZodType[]; output?: z.ZodType } }>;
  return Object.entries(all).map(([path, { _def }]) => ({ path, type: _def.type, meta: _def.meta, input: _def.inputs[0], output: _def.output }));
}

/**
 * The REST routes as the service publishes them: the same call routes/rest.ts makes, and the
 * activity export's stream, which the gateway serves itself (routes/audit-export.ts).
 */
export function restDocument(): OpenAPIObject {
  return withAuditExportRoute(createOpenApiDocument('http://localhost:3000', API_PREFIX));
}

const jsonSchemaOf = (schema: z.ZodType | undefined, io: 'input' | 'output'): JsonSchema =>
  schema ? (z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema) : {};

export function errorCodesSection(): string {
  const rows = ERROR_CODES.map((name) => [code(name), String(ERRORS[name].status), ERRORS[name].meaning]);
  return [sourceNote('`ERRORS` in server/src/errors/errors.ts'), '', table(['code', 'HTTP status', 'meaning'], rows)].join('\n');
}

type RuleName = keyof typeof AUTH_RATE_RULES;

/** What each rule counts, and under which key. A rule without a line here stops `npm run docs`. */
const RATE_RULE_MEANINGS: Record<RuleName, string> = {
  loginPerIp: 'sign-in attempts per client IP: passwords, second steps, step-up codes, passkey sign-ins and their options, provider callbacks',
  loginPerAccountIp: 'sign-in attempts per address and client IP (a provider callback under the address it asserts); an attempt that ends in a session is given back',
  failedLoginsPerAccount: 'failed logins per address (a wrong current password counts too), except from a known device of the account',
  failedLoginsPerDevice: 'failed logins per known device (the `svc_device` cookie)',
  registerPerIp: 'registrations per client IP',
  registerPerAddress: 'registrations per address',
  resendPerIp: 'verification resends per client IP',
  resendPerAddress: 'verification resends per address',
  forgotPerIp: 'password-reset requests per client IP',
  forgotPerAddress: 'password-reset requests per address',
  tokenUsesPerIp: 'uses of e-mailed tokens (password reset, e-mail change) per client IP',
  passwordChecksPerCaller: 'password confirmations (change password, change e-mail, delete account) per session, or per account for an API key',
  emailChangesPerAccount: 'e-mail change requests per account',
};

function windowText(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

export function rateLimitsSection(): string {
  const names = Object.keys(AUTH_RATE_RULES) as RuleName[];
  const undescribed = names.filter((name) => !RATE_RULE_MEANINGS[name]);
  if (undescribed.length) throw new Error(`scripts/docs/api.ts RATE_RULE_MEANINGS: describe ${undescribed.join(', ')}`);
  const rows = names.map((name) => {
    const rule = AUTH_RATE_RULES[name];
    return [code(rule.name), String(rule.limit), windowText(rule.windowSeconds), RATE_RULE_MEANINGS[name]];
  });
  return [sourceNote("`AUTH_RATE_RULES` in server/src/router.ts, from each module's `<module>.limits.ts`"), '', table(['rule', 'limit', 'window', 'counts'], rows)].join('\n');
}

const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);

type Route = { method: string; path: string; operation: Loose; procedure?: Procedure };

function restRoutes(document: OpenAPIObject): Route[] {
  const byRoute = new Map<string, Procedure>();
  const byPath = new Map<string, Procedure>();
  for (const procedure of procedures()) {
    const route = procedure.meta?.openapi;
    if (route) byRoute.set(`${route.method} ${route.path}`, procedure);
    byPath.set(procedure.path, procedure);
  }
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Loose).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path: `${API_PREFIX}${path}`,
      operation,
      // A route the gateway serves itself names its procedure by operationId, as trpc-to-openapi does (`admin-auditExport`).
      procedure: byRoute.get(`${method.toUpperCase()} ${path}`) ?? byPath.get(String(operation.operationId).replace('-', '.')),
    })),
  );
}

function authText(route: Route): string {
  if (!route.operation.security?.length) return 'public';
  return route.operation.tags?.includes('admin') ? 'credentials of an `admin`' : 'credentials';
}

const successOf = (operation: Loose): [string, Loose] => Object.entries(operation.responses as Loose).find(([status]) => Number(status) < 400)!;

/**
 * The fields with the descriptions the procedure's own schema gives them where the OpenAPI
 * document has none: it loses those of optional fields (`.optional().describe(…)`).
 */
function withDescriptions(schema: JsonSchema, source: JsonSchema): JsonSchema {
  const properties = Object.entries(schema.properties ?? {}).map(([name, field]) => [name, { ...field, description: field.description ?? source.properties?.[name]?.description }]);
  return { ...schema, properties: Object.fromEntries(properties) };
}

function parametersTable(operation: Loose, where: 'path' | 'query', input: JsonSchema): string | undefined {
  const parameters = (operation.parameters ?? []).filter((parameter: Loose) => parameter.in === where);
  if (!parameters.length) return undefined;
  const properties = Object.fromEntries(parameters.map((parameter: Loose) => [parameter.name, { ...parameter.schema, description: parameter.description ?? parameter.schema?.description }]));
  const required = parameters.filter((parameter: Loose) => parameter.required).map((parameter: Loose) => parameter.name);
  return inputTable(withDescriptions({ type: 'object', properties, required }, input));
}

/** What every route answers alike, said once above the routes rather than in each table (a control character's 400 stays in each). */
const EVERY_ROUTE_ONLY: ErrorCode[] = (Object.keys(ROUTE_ERRORS.everyRoute) as ErrorCode[]).filter((name) => name !== 'VALIDATION_FAILED');

const listed = (items: string[]) => (items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}` : items.join(''));

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** A row per code a route declares: its status, the code, and when (the document's `x-error-codes`). */
function errorRows(operation: Loose): string[][] {
  return Object.entries(operation.responses as Loose)
    .filter(([status]) => Number(status) >= 400)
    .flatMap(([status, response]) =>
      Object.entries((response[CODES_EXTENSION] ?? {}) as Record<ErrorCode, string>)
        .filter(([name]) => !EVERY_ROUTE_ONLY.includes(name as ErrorCode))
        .map(([name, when]) => [status, code(name), capitalised(when)]),
    );
}

function routeSection(route: Route): string {
  const { operation } = route;
  const [status, success] = successOf(operation);
  const lines = [`### ${route.method} ${route.path}`, '', sentence(operation.summary), ''];
  if (operation.description) lines.push(operation.description, '');
  const trpc = route.procedure ? `tRPC ${code(route.procedure.path)} (${route.procedure.type})` : 'no tRPC procedure';
  lines.push(`${trpc}. Auth: ${authText(route)}.`, '');
  const input = jsonSchemaOf(route.procedure?.input, 'input');
  const path = parametersTable(operation, 'path', input);
  if (path) lines.push('Path:', '', path, '');
  const query = parametersTable(operation, 'query', input);
  if (query) lines.push('Query:', '', query, '');
  const body = operation.requestBody?.content?.['application/json']?.schema as JsonSchema | undefined;
  if (body?.properties && Object.keys(body.properties).length) lines.push('Body (JSON):', '', inputTable(withDescriptions(body, input)), '');
  else if (route.method === 'POST') lines.push('Body: none (or `{}`).', '');
  lines.push(`Answer ${status}:`, '');
  for (const [name, header] of Object.entries((success.headers ?? {}) as Loose)) lines.push(`Header ${code(name)}: ${header.description}`, '');
  const [mediaType, media] = Object.entries(success.content as Loose)[0];
  if (mediaType !== 'application/json') lines.push(`A stream of ${code(mediaType)}, one JSON object a line, each:`, '');
  lines.push(outputTable(media.schema), '');
  lines.push(table(['status', 'error', 'when'], errorRows(operation)));
  return lines.join('\n');
}

export function restRoutesSection(): string {
  const routes = restRoutes(restDocument());
  const heading = (route: Route) => `${route.method} ${route.path}`;
  const index = table(
    ['route', 'tRPC', 'auth', 'success'],
    routes.map((route) => [`[${heading(route)}](#${headingAnchor(heading(route))})`, route.procedure ? code(route.procedure.path) : '', authText(route), successOf(route.operation)[0]]),
  );
  const anchors = routes.map((route) => headingAnchor(heading(route)));
  const repeated = anchors.filter((anchor, index) => anchors.indexOf(anchor) !== index);
  if (repeated.length) throw new Error(`two routes share the anchor ${repeated[0]}`);
  return [
    sourceNote('the OpenAPI document (gateway/src/routes/openapi-document.ts, the procedures\' meta and schemas)'),
    '',
    `Every route can also answer ${listed(EVERY_ROUTE_ONLY.map((name) => `${ERRORS[name].status} ${code(name)}`))} (see [Errors](#errors)); ` +
      "each route's table lists every other error it can answer with, a row per code.",
    '',
    index,
    '',
    ...routes.map(routeSection).flatMap((section) => [section, '']),
  ].join('\n');
}

function procedureSection(procedure: Procedure): string {
  const input = jsonSchemaOf(procedure.input, 'input');
  const lines = [`### ${procedure.path}`, '', `A ${procedure.type}.`, ''];
  lines.push(input.properties && Object.keys(input.properties).length ? ['Input:', '', inputTable(input)].join('\n') : 'Input: none.', '');
  lines.push('Output:', '', outputTable(jsonSchemaOf(procedure.output, 'output')));
  return lines.join('\n');
}

export function proceduresSection(): string {
  const all = procedures();
  const served = new Map(restRoutes(restDocument()).flatMap((route) => (route.procedure ? [[route.procedure.path, `${route.method} ${route.path}`] as const] : [])));
  const rows = all.map((procedure) => {
    const route = served.get(procedure.path);
    const rest = route ? `[${route}](#${headingAnchor(route)})` : `[none](#${headingAnchor(procedure.path)})`;
    return [code(procedure.path), procedure.type, rest, code(shapeText(jsonSchemaOf(procedure.input, 'input'))), code(shapeText(jsonSchemaOf(procedure.output, 'output')))];
  });
  // Each with a section of its own: those without a REST route, and any whose REST route is not trpc-to-openapi's.
  const trpcOnly = all.filter((procedure) => !procedure.meta?.openapi);
  return [
    sourceNote('`appRouter` in server/src/router.ts and the procedures\' zod schemas'),
    '',
    table(['procedure', 'kind', 'REST route', 'input', 'output'], rows),
    '',
    ...trpcOnly.map(procedureSection).flatMap((section) => [section, '']),
  ].join('\n');
}
