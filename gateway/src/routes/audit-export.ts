import type { ServerResponse } from 'node:http';
import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import type { OpenAPIObject, SchemaObject } from 'openapi3-ts/oas31';
import { z } from 'zod';
import { AppError, auditLineSchema, createCaller, routeErrors, UNKNOWN_FIELD, type AuditLine, type Deps, type Logger } from '../../../server/src/index.ts';
import { procedureContextOf } from '../procedure-context.ts';
import { restErrorResponses } from './openapi-document.ts';

const API_PREFIX = '/api/v1';
const AUDIT_PATH = '/admin/audit';
const NDJSON = 'application/x-ndjson';

/**
 * What GET /api/v1/admin/audit answers with when it fails, as a procedure's route declares it
 * (rest-meta.ts routeErrors): refusals come before the first byte of the stream.
 */
export const AUDIT_EXPORT_ERRORS = routeErrors({
  openapi: { method: 'GET', protect: true },
  adminOnly: true,
  errors: { VALIDATION_FAILED: 'a query value is invalid, `since` is after `until`, or a parameter is unknown (see `issues`)' },
})!;

/** The REST query (docs/API.md, Operator API); `cursor` is tRPC's paging, not a filter of the stream. */
const QUERY_FIELDS = new Set(['since', 'until', 'account_id']);

type Caller = ReturnType<typeof createCaller>;
type Filter = { since?: string; until?: string; account_id?: string };

/**
 * The export page after page, each through `admin.auditExport` as any caller would call it
 * (the role checked again each time: an admin demoted mid-export reads no further). The
 * first page is read before the generator is made, so a refusal is an ordinary error answer.
 */
async function* pagesAfter(caller: Caller, filter: Filter, first: { items: AuditLine[]; next_cursor: string | null }): AsyncGenerator<AuditLine[]> {
  let page = first;
  yield page.items;
  while (page.next_cursor !== null) {
    page = await caller.admin.auditExport({ ...filter, cursor: page.next_cursor });
    yield page.items;
  }
}

/** Resolves once the socket wants more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Each page goes out as soon as it is read, and the next is read only once the socket has
 * taken it (`drain`): a slow client slows the reading instead of filling memory. A client
 * that goes away ends the loop, and with it the reading.
 */
async function writeNdjson(res: ServerResponse, pages: AsyncIterable<AuditLine[]>): Promise<void> {
  for await (const lines of pages) {
    if (res.destroyed) return;
    if (!lines.length) continue;
    if (!res.write(`${lines.map((line) => JSON.stringify(line)).join('\n')}\n`)) {
      await drained(res);
    }
  }
  res.end();
}

/**
 * GET /api/v1/admin/audit: the activity export as NDJSON, for auditors. Not a trpc-to-openapi
 * route (it answers JSON only): validation, the role and the export's own record are the
 * procedure's, and every refusal comes before the first byte, so it is the gateway's one
 * error answer (http.ts errorHandler).
 */
export function mountAuditExport(router: Router, deps: Deps): void {
  router.get(`${API_PREFIX}${AUDIT_PATH}`, async (ctx: KoaContext) => {
    const stray = Object.keys(ctx.query).filter((key) => !QUERY_FIELDS.has(key));
    if (stray.length) throw new AppError('VALIDATION_FAILED', undefined, { issues: stray.map((path) => ({ path, message: UNKNOWN_FIELD })) });
    // Repeated parameters stay arrays, for the procedure's schema to refuse.
    const filter = { ...ctx.query } as Filter;
    const caller = createCaller(procedureContextOf(deps, ctx));
    const first = await caller.admin.auditExport(filter);

    ctx.respond = false;
    const res = ctx.res;
    res.statusCode = 200;
    res.setHeader('Content-Type', NDJSON);
    if (ctx.method === 'HEAD') return void res.end();
    try {
      await writeNdjson(res, pagesAfter(caller, filter, first));
    } catch (error) {
      // The status line is long gone: cutting the connection short is how the client learns
      // the stream is incomplete (no final chunk). The procedure has logged its own failure.
      (ctx.state.logger as Logger).warn({ err: error }, 'audit export cut short');
      res.destroy();
    }
  });
}

// One line: the schema beside it is that of a line, and an example must fit its schema.
const LINE_EXAMPLE: AuditLine = { id: '1041', at: '2026-11-23T12:00:04.512Z', account_id: 42, event: 'login.succeeded', ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (X11; Linux x86_64)', data: null };

function lineSchema(): SchemaObject {
  const { $schema: _draft, ...schema } = z.toJSONSchema(auditLineSchema, { io: 'output' });
  return schema as SchemaObject;
}

const queryParameter = (name: string, description: string, schema: SchemaObject, example: unknown) => ({ in: 'query', name, required: false, description, schema, example });

function exportOperation(): Record<string, unknown> {
  return {
    operationId: 'admin-auditExport',
    tags: ['admin'],
    summary: "Every account's activity events, oldest first, as an NDJSON stream",
    description:
      'One JSON object a line (`application/x-ndjson`), in the order the events were recorded, streamed as it is read: ' +
      'there is no page size to choose and no end to wait for. The export itself is recorded in the caller\'s activity ' +
      '(`admin.audit_exported`, with the filter). A connection cut before the final chunk means the stream is incomplete. ' +
      'Over tRPC, `admin.auditExport` gives the same events a page of up to 1000 at a time (`cursor`: the previous `next_cursor`).',
    security: [{ bearer: [] }, { cookie: [] }],
    parameters: [
      queryParameter('since', 'Events at or after this time (ISO-8601 with an offset)', { type: 'string', format: 'date-time' }, '2026-11-01T00:00:00Z'),
      queryParameter('until', 'Events before this time; not before `since`', { type: 'string', format: 'date-time' }, '2026-12-01T00:00:00Z'),
      queryParameter('account_id', "Only this account's events", { type: 'integer', minimum: 1, maximum: 2_147_483_647 }, 42),
    ],
    responses: {
      '200': {
        description: 'The events, one JSON object a line, each ending with a newline; the schema and example are of one line.',
        content: { [NDJSON]: { schema: lineSchema(), example: LINE_EXAMPLE } },
      },
      ...restErrorResponses(AUDIT_EXPORT_ERRORS),
    },
  };
}

/** The published document with the export's route, which trpc-to-openapi does not serve (see mountAuditExport). */
export function withAuditExportRoute(document: OpenAPIObject): OpenAPIObject {
  return { ...document, paths: { ...document.paths, [AUDIT_PATH]: { get: exportOperation() } } };
}
