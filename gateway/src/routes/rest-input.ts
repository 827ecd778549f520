import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, UNKNOWN_FIELD } from '../../../server/src/index.ts';

/** A request as the REST handlers see it: with the body rest.ts read, if any. */
export type RestRequest = IncomingMessage & { body?: unknown };

/** The request's URL, as trpc-to-openapi's handler parses it (a path alone gets a placeholder origin). */
export const urlOf = (req: RestRequest) => new URL(req.url!.startsWith('/') ? `http://127.0.0.1${req.url}` : req.url!);

/** Whether a route of this method takes its input from the body (else from the query string), as trpc-to-openapi decides. */
export const readsBody = (method: string | undefined) => method !== 'GET' && method !== 'DELETE';

/**
 * Fields sent where the route does not read them, refused by name as unknown fields are,
 * instead of dropped: a query string on a route whose input is its body (POST, PATCH), a
 * body's fields on one whose input is its query string (DELETE). A `grace_seconds` put in
 * the URL of a key rotation must not rotate the key with no grace. A GET's body is never
 * read, and a GET without input still ignores its query string (a cache-buster on /me).
 * Both REST handlers apply it (gateway/src/fast-paths/), before the procedure's input is read.
 */
export function refuseMisplacedFields(req: RestRequest, url: URL | undefined, useBody: boolean): void {
  const stray = useBody ? queryKeys(req, url) : bodyKeys(req);
  if (stray.length) throw new AppError('VALIDATION_FAILED', undefined, { issues: stray.map((path) => ({ path, message: UNKNOWN_FIELD })) });
}

const queryKeys = (req: RestRequest, url: URL | undefined) => (req.url!.includes('?') ? [...new Set((url ?? urlOf(req)).searchParams.keys())] : []);
const bodyKeys = (req: RestRequest) => (typeof req.body === 'object' && req.body !== null ? Object.keys(req.body) : []);

/** A REST answer as trpc-to-openapi's handler writes one: JSON, then the headers in their order (a repeated Set-Cookie as separate lines). */
export function sendJson(res: ServerResponse, status: number, headers: Iterable<[string, string]>, body: unknown): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  for (const [name, value] of headers) res.appendHeader(name, value);
  res.end(body === undefined ? undefined : JSON.stringify(body));
}
