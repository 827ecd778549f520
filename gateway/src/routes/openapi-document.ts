import type { OpenAPIObject, SchemaObject } from 'openapi3-ts/oas31';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { ERROR_STATUS, type ErrorCode } from '../../../server/src/errors.ts';
import { appRouter } from '../../../server/src/router.ts';
import type { ProcedureMeta } from '../../../server/src/trpc.ts';

type Loose = Record<string, any>;

/** Codes only the webhook routes answer with: not part of the REST document. */
const WEBHOOK_ONLY: ErrorCode[] = ['INVALID_SIGNATURE', 'INVALID_PAYLOAD'];

/** The contract's error body (section 2), the same on every route of the gateway. */
const ERROR_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'Every error: a stable `code` to branch on, a `message` for people, and for validation failures the `issues`.',
  required: ['success', 'code', 'message'],
  additionalProperties: false,
  properties: {
    success: { type: 'boolean', enum: [false] },
    code: { type: 'string', enum: Object.keys(ERROR_STATUS).filter((code) => !WEBHOOK_ONLY.includes(code as ErrorCode)) },
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

function codesFor(status: number): ErrorCode[] {
  return (Object.entries(ERROR_STATUS) as Array<[ErrorCode, number]>)
    .filter(([code, codeStatus]) => codeStatus === status && !WEBHOOK_ONLY.includes(code))
    .map(([code]) => code);
}

function errorResponse(status: number, description: string, isProtected: boolean): Loose {
  const headers: Loose = {};
  if (status === 429 || status === 503) headers['Retry-After'] = RETRY_AFTER;
  if (status === 401 && isProtected) headers['WWW-Authenticate'] = WWW_AUTHENTICATE;
  const codes = codesFor(status);
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
 * trpc-to-openapi describes errors with its own `{message, code, issues}` body and every
 * success as a 200. The gateway answers with the contract's error body and register with a
 * 201, so the document says so: one `Error` schema, each route's own error statuses with
 * their codes and headers, and success statuses from the procedures' meta.
 */
function describeContract(document: OpenAPIObject): OpenAPIObject {
  const metaByRoute = new Map<string, ProcedureMeta>();
  for (const procedure of Object.values(appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta } }>)) {
    const meta = procedure._def.meta;
    if (meta?.openapi) metaByRoute.set(`${meta.openapi.method.toLowerCase()} ${meta.openapi.path}`, meta);
  }
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Loose)) {
      const meta = metaByRoute.get(`${method} ${path}`);
      const described = (meta?.openapi?.errorResponses ?? {}) as Record<number, string>;
      const isProtected = Boolean(operation.security?.length);
      const shaped: Loose = {};
      for (const [status, response] of Object.entries(operation.responses as Loose)) {
        const code = Number(status);
        if (code < 400) shaped[String(meta?.successStatus ?? code)] = response;
        else shaped[status] = errorResponse(code, described[code] ?? response.description, isProtected);
      }
      shaped['500'] ??= errorResponse(500, INTERNAL, isProtected);
      operation.responses = shaped;
    }
  }
  const schemas: Loose = { ...document.components?.schemas };
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  document.components = { ...document.components, schemas: { ...schemas, Error: ERROR_SCHEMA } };
  return document;
}

export function createOpenApiDocument(publicUrl: string, apiPrefix: string): OpenAPIObject {
  const document = generateOpenApiDocument(appRouter, {
    title: 'Gatehouse API',
    version: '1.0.0',
    description: 'Account access. Errors are `{ success: false, code, message, issues? }`.',
    baseUrl: `${publicUrl}${apiPrefix}`,
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description: 'A session JWT or a 64-hex API key' },
      cookie: { type: 'apiKey', in: 'cookie', name: 'svc_token' },
    },
  });
  return describeContract(document);
}
