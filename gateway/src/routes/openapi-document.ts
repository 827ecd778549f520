import type { OpenAPIObject, SchemaObject, TagObject } from 'openapi3-ts/oas31';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { appRouter, ERROR_CODES, ERRORS, routeErrors, type ErrorCode, type ErrorDeclarations, type ProcedureMeta } from '../../../server/src/index.ts';
import { OPERATION_EXAMPLES } from './openapi-examples.ts';

type Loose = Record<string, any>;

/** Codes only the webhook routes answer with: never listed on a REST route's answers. */
export const WEBHOOK_ONLY: ErrorCode[] = ['INVALID_SIGNATURE', 'INVALID_PAYLOAD'];

/** Every tag an operation may carry, with the description readers see above its group. */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  auth: 'Registration, e-mail verification, login and the account lifecycle: password reset and change, API key rotation, sessions, e-mail change, deletion, activity.',
  admin: 'The operator surface, the inbox of webhook deliveries: accounts with role `admin` only; anyone else signed in gets 403.',
  webhooks: "Inbound provider webhooks. Not under /api/v1, not our credentials: each is signed by its provider.",
};

/** The one error body (docs/API.md, Errors), the same on every route of the gateway, webhooks included. */
const ERROR_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'Every error: a stable `code` to branch on, a `message` for people, and for validation failures the `issues`.',
  required: ['success', 'code', 'message'],
  additionalProperties: false,
  properties: {
    success: { type: 'boolean', enum: [false] },
    code: { type: 'string', enum: ERROR_CODES },
    message: { type: 'string', description: 'Human text; a 5xx message never carries internal detail.' },
    issues: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'message'],
        additionalProperties: false,
        properties: {
          path: { type: 'string', description: 'The field, dotted for nested ones; `(body)` for the body as a whole.' },
          message: { type: 'string' },
        },
      },
    },
    mfa_token: { type: 'string', description: '`MFA_REQUIRED`: the single-use token for the second step (`POST /auth/login/mfa`), valid 5 minutes.' },
    methods: {
      type: 'array',
      items: { type: 'string', enum: ['totp', 'passkey', 'recovery_code'] },
      description: '`MFA_REQUIRED` and `STEP_UP_REQUIRED`: the ways the account can prove its second factor.',
    },
    reauth_url: { type: 'string', description: '`REAUTH_REQUIRED`: where a sign-in through one of the account\'s identity providers starts, coming back to the account page.' },
  },
};

const RETRY_AFTER = { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } };
const WWW_AUTHENTICATE = { description: 'Always `Bearer`.', schema: { type: 'string', enum: ['Bearer'] } };

/** Where an error answer says which codes it may carry and when: `{ CODE: when }` (docs/API.md reads it). */
export const CODES_EXTENSION = 'x-error-codes';

function codesFor(status: number, codes: readonly ErrorCode[]): ErrorCode[] {
  return codes.filter((code) => ERRORS[code].status === status);
}

/** An error answer: the error body, narrowed to the codes that status can carry here. */
export function errorResponse(status: number, description: string, options: { codes?: readonly ErrorCode[]; headers?: Loose } = {}): Loose {
  const all = ERROR_CODES;
  const codes = codesFor(status, options.codes ?? all.filter((code) => !WEBHOOK_ONLY.includes(code)));
  const headers = options.headers ?? {};
  return {
    description,
    ...(Object.keys(headers).length ? { headers } : {}),
    content: {
      'application/json': {
        schema: { allOf: [{ $ref: '#/components/schemas/Error' }, ...(codes.length ? [{ properties: { code: { enum: codes } } }] : [])] },
      },
    },
  };
}

/**
 * A REST route's error answers from what it declares (rest-meta.ts routeErrors), a status
 * each: the description lists its codes and when, the schema's `code` enum is exactly those
 * codes, and the headers are those its codes send (Retry-After, WWW-Authenticate).
 */
export function restErrorResponses(declared: ErrorDeclarations): Record<string, Loose> {
  const codes = ERROR_CODES.filter((code) => declared[code] !== undefined);
  const responses: Record<string, Loose> = {};
  for (const status of [...new Set(codes.map((code) => ERRORS[code].status))]) {
    const here = codesFor(status, codes);
    const headers: Loose = {};
    if (here.includes('RATE_LIMITED') || here.includes('SERVICE_UNAVAILABLE')) headers['Retry-After'] = RETRY_AFTER;
    if (here.includes('UNAUTHORIZED')) headers['WWW-Authenticate'] = WWW_AUTHENTICATE;
    const description = here.map((code) => `- \`${code}\`: ${declared[code]}`).join('\n');
    const response = errorResponse(status, description, { codes: here, headers });
    responses[String(status)] = { ...response, [CODES_EXTENSION]: Object.fromEntries(here.map((code) => [code, declared[code]])) };
  }
  return responses;
}

/** A REST route: its method and path as its procedure's `openapi` meta declares them, with that meta. */
type RestRoute = { method: 'get' | 'post' | 'put' | 'patch' | 'delete'; path: string; meta: ProcedureMeta };

/**
 * The REST routes, read from the procedures' own meta as trpc-to-openapi reads them: the
 * table routes/rest.ts mounts at each start, and the operations this document describes
 * (tests/api-docs.openapi.rest.test.ts holds the two alike). Reading it costs nothing next to
 * describing every schema, which is why the document waits until it is asked for.
 */
export function restRoutes(): RestRoute[] {
  return Object.values(appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta } }>).flatMap(({ _def: { meta } }) =>
    meta?.openapi && meta.openapi.enabled !== false ? [{ method: meta.openapi.method.toLowerCase() as RestRoute['method'], path: meta.openapi.path, meta }] : [],
  );
}

function proceduresMetaByRoute(): Map<string, ProcedureMeta> {
  return new Map(restRoutes().map(({ method, path, meta }) => [`${method} ${path}`, meta]));
}

/** The example of a media type; the schema itself is left as the procedure's own. */
function withExample(content: Loose | undefined, example: unknown): void {
  const media = content?.['application/json'];
  if (media && example !== undefined) media.example = example;
}

/** What the document says of a password field that an account without a password leaves out. */
export const PASSWORD_LEFT_OUT =
  'An account without a password (one made through an identity provider) leaves it out: a recent sign-in through one of its providers stands in (see `REAUTH_REQUIRED`).';

/**
 * A confirming password is optional in the procedure's schema only for the accounts that have
 * none (passwordConfirmingProcedure): the document shows it as required, with a note saying so.
 */
function withPasswordRequired(content: Loose | undefined, field: string | undefined): void {
  const schema = content?.['application/json']?.schema;
  if (!field || !schema?.properties?.[field]) return;
  schema.required = [...new Set([...(schema.required ?? []), field])];
  const property = schema.properties[field];
  property.description = property.description ? `${property.description} ${PASSWORD_LEFT_OUT}` : PASSWORD_LEFT_OUT;
}

/**
 * trpc-to-openapi describes errors with its own `{message, code, issues}` body and every
 * success as a 200. The gateway answers with its own error body and register with a
 * 201, so the document says so: one `Error` schema, each route's error answers from the
 * codes it declares, and success statuses from the procedures' meta. Public routes
 * say `security: []` outright, so a reader (and a linter) can tell them from a route
 * whose credentials were forgotten.
 */
function describeAnswers(document: OpenAPIObject): OpenAPIObject {
  const metaByRoute = proceduresMetaByRoute();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Loose)) {
      const meta = metaByRoute.get(`${method} ${path}`);
      if (!operation.security?.length) operation.security = [];
      const examples = OPERATION_EXAMPLES[operation.operationId];
      withExample(operation.requestBody?.content, examples?.request);
      withPasswordRequired(operation.requestBody?.content, meta?.passwordField);
      const shaped: Loose = {};
      for (const [status, response] of Object.entries(operation.responses as Loose)) {
        if (Number(status) >= 400) continue;
        withExample(response.content, examples?.response);
        shaped[String(meta?.successStatus ?? status)] = response;
      }
      operation.responses = { ...shaped, ...restErrorResponses(routeErrors(meta) ?? {}) };
    }
  }
  const schemas: Loose = { ...document.components?.schemas };
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  document.components = { ...document.components, schemas: { ...schemas, Error: ERROR_SCHEMA } };
  document.tags = tagsOf(document);
  return document;
}

/** The tags the operations use, in first-use order, each with its description. */
export function tagsOf(document: OpenAPIObject): TagObject[] {
  const names = new Set<string>();
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item as Loose)) for (const tag of operation.tags ?? []) names.add(tag);
  }
  return [...names].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? '' }));
}

/**
 * The REST routes under `apiPrefix`, as trpc-to-openapi maps the procedures: the operations
 * of `restRoutes`, described. It holds REST operations only; the published document adds
 * the webhook routes to it (openapi-webhooks.ts).
 */
export function createOpenApiDocument(publicUrl: string, apiPrefix: string): OpenAPIObject {
  const document = generateOpenApiDocument(appRouter, {
    title: 'Gatehouse API',
    version: '1.0.0',
    description:
      'Account access and webhook ingress. Errors are `{ success: false, code, message, issues? }` on every route. ' +
      'Authenticate with **Authorize**: a session JWT (from `POST /auth/login`) or a 64-hex API key as a Bearer token.',
    baseUrl: `${publicUrl}${apiPrefix}`,
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description: 'A session JWT or a 64-hex API key' },
      cookie: { type: 'apiKey', in: 'cookie', name: 'svc_token', description: 'The session cookie that login sets (browsers send it themselves)' },
    },
  });
  // Gatehouse is an internal service of the platform, not published for reuse.
  document.info.license = { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' };
  document.info.contact = { name: 'Gatehouse', url: publicUrl };
  document.servers = [{ url: `${publicUrl}${apiPrefix}`, description: 'This Gatehouse (PUBLIC_URL)' }];
  return describeAnswers(document);
}
