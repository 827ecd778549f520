import type { OpenAPIObject, SchemaObject, TagObject } from 'openapi3-ts/oas31';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { appRouter, ERROR_CODES, ERRORS, type ErrorCode, type ProcedureMeta } from '../../../server/src/index.ts';
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
  },
};

const RETRY_AFTER = { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } };
const WWW_AUTHENTICATE = { description: 'Always `Bearer`.', schema: { type: 'string', enum: ['Bearer'] } };
const INTERNAL = 'Unexpected failure on our side; the body carries no detail (it is in the log, under the request id).';

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

/** An error answer of a REST route: with Retry-After where it may wait, WWW-Authenticate on a protected 401. */
export function restErrorResponse(status: number, description: string, isProtected: boolean): Loose {
  const headers: Loose = {};
  if (status === 429 || status === 503) headers['Retry-After'] = RETRY_AFTER;
  if (status === 401 && isProtected) headers['WWW-Authenticate'] = WWW_AUTHENTICATE;
  return errorResponse(status, description, { headers });
}

function proceduresMetaByRoute(): Map<string, ProcedureMeta> {
  const metaByRoute = new Map<string, ProcedureMeta>();
  for (const procedure of Object.values(appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta } }>)) {
    const meta = procedure._def.meta;
    if (meta?.openapi) metaByRoute.set(`${meta.openapi.method.toLowerCase()} ${meta.openapi.path}`, meta);
  }
  return metaByRoute;
}

/** The example of a media type; the schema itself is left as the procedure's own. */
function withExample(content: Loose | undefined, example: unknown): void {
  const media = content?.['application/json'];
  if (media && example !== undefined) media.example = example;
}

/**
 * trpc-to-openapi describes errors with its own `{message, code, issues}` body and every
 * success as a 200. The gateway answers with its own error body and register with a
 * 201, so the document says so: one `Error` schema, each route's own error statuses with
 * their codes and headers, and success statuses from the procedures' meta. Public routes
 * say `security: []` outright, so a reader (and a linter) can tell them from a route
 * whose credentials were forgotten.
 */
function describeAnswers(document: OpenAPIObject): OpenAPIObject {
  const metaByRoute = proceduresMetaByRoute();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Loose)) {
      const meta = metaByRoute.get(`${method} ${path}`);
      const described = (meta?.openapi?.errorResponses ?? {}) as Record<number, string>;
      const isProtected = Boolean(operation.security?.length);
      if (!isProtected) operation.security = [];
      const examples = OPERATION_EXAMPLES[operation.operationId];
      withExample(operation.requestBody?.content, examples?.request);
      const shaped: Loose = {};
      for (const [status, response] of Object.entries(operation.responses as Loose)) {
        const code = Number(status);
        if (code < 400) {
          withExample(response.content, examples?.response);
          shaped[String(meta?.successStatus ?? code)] = response;
        } else {
          shaped[status] = restErrorResponse(code, described[code] ?? response.description, isProtected);
        }
      }
      shaped['500'] ??= restErrorResponse(500, INTERNAL, isProtected);
      operation.responses = shaped;
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
 * The REST routes under `apiPrefix`, as trpc-to-openapi maps the procedures. This is also
 * the route table routes/rest.ts mounts, so it holds REST operations only; the published
 * document adds the webhook routes to it (openapi-webhooks.ts).
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
