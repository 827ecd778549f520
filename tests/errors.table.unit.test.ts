import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { TRPCError } from '@trpc/server';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { createOpenApiHandler } from '../gateway/src/fast-paths/openapi-handler.ts';
import { problemFor } from '../gateway/src/pages/kit/problems.ts';
import type { Deps } from '../server/src/deps.ts';
import { AppError, codeForStatus, ERROR_CODES, ERRORS, type ErrorCode } from '../server/src/errors/errors.ts';
import { toErrorResponse } from '../server/src/errors/response.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { createContextInner } from '../server/src/trpc/context.ts';
import { publicProcedure, router } from '../server/src/trpc/procedures.ts';
import { serveInProcess, testFetch } from './helpers/service.ts';

// The one error table, walked code by code through every way an error leaves the service:
// the REST adapter, tRPC's HTTP envelope, and the pages' problem page. No database: a
// procedure that throws the code it is given is all the transports need.

const failing = router({
  fail: publicProcedure
    .meta({ openapi: { method: 'POST', path: '/fail', protect: false } })
    .input(z.strictObject({ code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]) }))
    .output(z.object({}))
    .mutation(({ input }) => {
      throw new AppError(input.code, `the ${input.code} of this test`);
    }),
});

// What the procedures' middleware needs of the service: a logger, here one that writes nowhere.
const deps = { logger: createLogger('silent') } as unknown as Deps;
const context = () => createContextInner(deps);

const test = suite<{ served: { close(): void }; url: string }>('the error table: code, HTTP status, tRPC code, default message, everywhere');

test.before(async (ctx) => {
  const rest = createOpenApiHandler({ router: failing, logger: deps.logger });
  // As the gateway does (routes/rest.ts): the body is read first and handed over parsed.
  const served = serveInProcess(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    await rest(Object.assign(req, { body: text ? JSON.parse(text) : {} }), res, context);
  });
  ctx.served = served;
  ctx.url = served.url;
});
test.after(({ served }) => {
  served?.close();
});

test('every row is complete; within a status the first code is the generic one', () => {
  for (const code of ERROR_CODES) {
    const row = ERRORS[code];
    assert.ok(row.status >= 400 && row.status < 600, code);
    assert.ok(row.message.endsWith('.') && row.meaning.length > 10, code);
    assert.ok(TRPC_ERROR_CODES_BY_KEY[row.trpc] !== undefined, `${code}: ${row.trpc} is a tRPC code`);
  }
  assert.is(codeForStatus(400), 'VALIDATION_FAILED');
  assert.is(codeForStatus(403), 'FORBIDDEN');
  assert.is(codeForStatus(418), 'INTERNAL_ERROR');
});

test('REST: each code answers its status and the error body; a 5xx keeps its detail to itself', async ({ url }) => {
  for (const code of ERROR_CODES) {
    const response = await testFetch(`${url}/fail`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    const body = await response.json();
    assert.is(response.status, ERRORS[code].status, code);
    const message = ERRORS[code].status >= 500 ? ERRORS[code].message : `the ${code} of this test`;
    assert.equal(body, { success: false, code, message }, code);
    assert.is(response.headers.get('www-authenticate'), code === 'UNAUTHORIZED' ? 'Bearer' : null, code);
  }
});

test("tRPC: each code answers its status, tRPC's code and the same body in the envelope's data", async () => {
  for (const code of ERROR_CODES) {
    const request = new Request('http://gatehouse.test/trpc/fail', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    const response = await fetchRequestHandler({ endpoint: '/trpc', req: request, router: failing, createContext: context });
    const { error } = await response.json();
    assert.is(response.status, ERRORS[code].status, code);
    assert.is(error.code, TRPC_ERROR_CODES_BY_KEY[ERRORS[code].trpc], `${code}: JSON-RPC code of ${ERRORS[code].trpc}`);
    assert.is(error.data.appCode, code);
    assert.is(error.data.httpStatus, ERRORS[code].status);
    assert.is(error.message, ERRORS[code].status >= 500 ? ERRORS[code].message : `the ${code} of this test`);
  }
});

test('pages: each code has a problem page with a title and words for a person, never a stack', () => {
  for (const code of ERROR_CODES) {
    const { status, body } = toErrorResponse(new AppError(code));
    assert.is(status, ERRORS[code].status);
    const problem = problemFor(code, body.message);
    assert.ok(problem.title.length > 0 && problem.text.length > 0, code);
    assert.not.match(problem.text, /at .+\.ts:\d+/);
  }
});

test('an error that is no AppError is a 500 without detail, whatever it says', async ({ url }) => {
  const { status, code, body, log } = toErrorResponse(new Error('password=hunter2 at /secret/path'));
  assert.is(status, 500);
  assert.is(code, 'INTERNAL_ERROR');
  assert.equal(body, { success: false, code: 'INTERNAL_ERROR', message: ERRORS.INTERNAL_ERROR.message });
  assert.equal(log, { level: 'error', message: 'unexpected error' });
  const response = await testFetch(`${url}/nowhere`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.is(response.status, 404);
});

test('a failure is mapped once: every layer that asks again, through any tRPC wrapping, gets the answer already made', () => {
  const failure = new AppError('RATE_LIMITED', undefined, { retryAfterSeconds: 7 });
  const first = toErrorResponse(failure);
  assert.is(first.status, 429);
  assert.is(first.headers['retry-after'], '7');
  assert.is(toErrorResponse(failure), first, 'the same error asked again');
  // As tRPC wraps what a procedure throws, and as the procedure's settling wraps it once more.
  const wrapped = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: failure });
  const settled = new TRPCError({ code: 'TOO_MANY_REQUESTS', message: first.body.message, cause: failure });
  assert.is(toErrorResponse(wrapped), first);
  assert.is(toErrorResponse(settled), first);
  // A different failure of the same code is its own answer.
  const other = toErrorResponse(new AppError('RATE_LIMITED', undefined, { retryAfterSeconds: 9 }));
  assert.is.not(other, first);
  assert.is(other.headers['retry-after'], '9');
});

test.run();
