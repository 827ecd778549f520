import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { createOpenApiHandler } from '../gateway/src/fast-paths/openapi-handler.ts';
import { AppError } from '../server/src/errors/errors.ts';
import type { Logger } from '../server/src/lib/logger.ts';
import type { Context } from '../server/src/trpc/context.ts';
import { serveInProcess, testFetch } from './helpers/service.ts';

// The REST adapter alone: how a procedure's result or failure becomes a REST answer. A tiny
// router of its own behind the adapter, on a plain Node server on port 0; no service, no
// database, none of the gateway's middleware (body limits, 405s and the access log are
// tested with the whole gateway, in gateway.errors.rest.test.ts).

const t = initTRPC.context<Context>().meta<OpenApiMeta>().create();

const router = t.router({
  ping: t.procedure
    .meta({ openapi: { method: 'GET', path: '/ping' } })
    .input(z.void())
    .query(() => ({ pong: true })),
  listThings: t.procedure
    .meta({ openapi: { method: 'GET', path: '/owners/{owner}/things' } })
    .input(z.strictObject({ owner: z.string(), limit: z.number().int().max(100), tags: z.array(z.string()).optional() }))
    .query(({ input }) => ({ owner: input.owner, limit: input.limit, tags: input.tags ?? null })),
  createThing: t.procedure
    .meta({ openapi: { method: 'POST', path: '/things' } })
    .input(z.strictObject({ name: z.string().min(1), count: z.number() }))
    .mutation(({ input, ctx }) => {
      ctx.response.status = 201;
      ctx.response.signedIn = { token: 'session-1', maxAgeSeconds: 60, device: { token: 'device-1', maxAgeSeconds: 120 } };
      return { created: input.name, count: input.count };
    }),
  removeThing: t.procedure
    .meta({ openapi: { method: 'DELETE', path: '/things/{id}' } })
    .input(z.object({ id: z.string() }))
    .mutation(({ input }) => {
      throw new AppError('NOT_FOUND', `No thing ${input.id}.`);
    }),
  slowDown: t.procedure
    .meta({ openapi: { method: 'POST', path: '/slow-down' } })
    .input(z.object({}))
    .mutation(() => {
      throw new AppError('RATE_LIMITED', undefined, { retryAfterSeconds: 30 });
    }),
  whoAmI: t.procedure
    .meta({ openapi: { method: 'GET', path: '/who' } })
    .input(z.void())
    .query(() => {
      throw new AppError('UNAUTHORIZED');
    }),
  broken: t.procedure
    .meta({ openapi: { method: 'GET', path: '/broken' } })
    .input(z.void())
    .query(() => {
      throw new Error('connection to db://admin:hunter2@10.0.0.5 lost');
    }),
});

type Logged = { level: string; fields: { err?: unknown }; message: string };
type Adapter = { url: string; logged: Logged[]; contexts: number; close(): Promise<void> };
type Suite = { adapter: Adapter };
const test = suite<Suite>('REST adapter: a procedure mapped onto a REST answer');

/**
 * The adapter over `router` on a fresh server; `createContext` may be swapped for one that fails.
 * `found: true` answers as the gateway's REST dispatch does: the route found first with
 * `handler.find` (for a plain path), then `handler.answer`.
 */
async function startAdapter(createContext?: () => Context, options: { found?: boolean } = {}): Promise<Adapter> {
  const logged: Logged[] = [];
  const log = (level: string) => (fields: Logged['fields'], message: string) => void logged.push({ level, fields, message });
  const adapter = { url: '', logged, contexts: 0, close: async () => {} };
  const handler = createOpenApiHandler({ router, logger: { error: log('error'), warn: log('warn') } as unknown as Logger });
  const contextOf =
    createContext ??
    (() => {
      adapter.contexts++;
      return { response: {}, deps: { config: { publicUrl: 'http://127.0.0.1' } } } as unknown as Context;
    });
  const served = serveInProcess((req, res) => {
    const route = options.found ? handler.find(req.method!, req.url!.split('?')[0]) : undefined;
    void (route ? handler.answer(req, res, route, contextOf) : handler(req, res, contextOf));
  });
  adapter.url = served.url;
  adapter.close = async () => served.close();
  return adapter;
}

test.before(async (context) => {
  context.adapter = await startAdapter();
});
test.after(async ({ adapter }) => {
  await adapter?.close();
});

async function call(adapter: Adapter, method: string, path: string, init: { json?: unknown; body?: string; type?: string } = {}) {
  const body = init.json !== undefined ? JSON.stringify(init.json) : init.body;
  const headers: Record<string, string> = {};
  if (init.type ?? (init.json !== undefined ? 'application/json' : undefined)) headers['content-type'] = init.type ?? 'application/json';
  const res = await testFetch(adapter.url + path, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

test("a query's result is the JSON body, as it is, with 200", async ({ adapter }) => {
  const answer = await call(adapter, 'GET', '/ping');
  assert.is(answer.status, 200);
  assert.is(answer.headers.get('content-type'), 'application/json');
  assert.equal(answer.body, { pong: true });
});

test('path and query parameters make the input; query text is coerced to the schema, one value to a one-element array', async ({ adapter }) => {
  const one = await call(adapter, 'GET', '/owners/ann/things?limit=60&tags=red');
  assert.is(one.status, 200, one.text);
  assert.equal(one.body, { owner: 'ann', limit: 60, tags: ['red'] });
  const two = await call(adapter, 'GET', '/owners/bob/things?limit=5&tags=red&tags=blue');
  assert.equal(two.body, { owner: 'bob', limit: 5, tags: ['red', 'blue'] });
  const none = await call(adapter, 'GET', '/owners/cy/things?limit=1');
  assert.equal(none.body, { owner: 'cy', limit: 1, tags: null });
});

test('a mutation reads its JSON body, and answers with the status and headers the procedure asked for', async ({ adapter }) => {
  const answer = await call(adapter, 'POST', '/things', { json: { name: 'lamp', count: 2 } });
  assert.is(answer.status, 201);
  assert.equal(answer.body, { created: 'lamp', count: 2 });
  const cookies = answer.headers.getSetCookie();
  assert.equal(cookies.length, 2, 'the session and the device cookie, each its own header, none merged away');
  assert.match(cookies[0], /^svc_token=session-1; .*HttpOnly/);
  assert.match(cookies[0], /Max-Age=60\b/);
  assert.match(cookies[1], /^svc_device=device-1; .*HttpOnly/);
  assert.match(cookies[1], /Max-Age=120\b/);
});

test('a JSON body is not coerced: "2" is not a number there, and the answer names the field', async ({ adapter }) => {
  const answer = await call(adapter, 'POST', '/things', { json: { name: 'lamp', count: '2' } });
  assert.is(answer.status, 400);
  assert.is(answer.body.success, false);
  assert.is(answer.body.code, 'VALIDATION_FAILED');
  assert.equal(answer.body.issues.map((issue: { path: string }) => issue.path), ['count']);
});

test('invalid query input is a 400 VALIDATION_FAILED naming each field, unknown ones included', async ({ adapter }) => {
  const answer = await call(adapter, 'GET', '/owners/ann/things?limit=500&colour=red');
  assert.is(answer.status, 400);
  assert.is(answer.body.code, 'VALIDATION_FAILED');
  assert.equal(answer.body.issues.map((issue: { path: string }) => issue.path).sort(), ['colour', 'limit']);
});

test("an AppError is answered with its code's status and body, and the headers it implies", async ({ adapter }) => {
  const missing = await call(adapter, 'DELETE', '/things/7');
  assert.is(missing.status, 404);
  assert.equal(missing.body, { success: false, code: 'NOT_FOUND', message: 'No thing 7.' });

  const limited = await call(adapter, 'POST', '/slow-down', { json: {} });
  assert.is(limited.status, 429);
  assert.is(limited.body.code, 'RATE_LIMITED');
  assert.is(limited.headers.get('retry-after'), '30');

  const anonymous = await call(adapter, 'GET', '/who');
  assert.is(anonymous.status, 401);
  assert.is(anonymous.headers.get('www-authenticate'), 'Bearer');
});

test('an unexpected failure is a bare 500: nothing of the error reaches the caller', async ({ adapter }) => {
  const answer = await call(adapter, 'GET', '/broken');
  assert.is(answer.status, 500);
  assert.equal(answer.body, { success: false, code: 'INTERNAL_ERROR', message: 'Something went wrong on our side.' });
  assert.not.match(answer.text, 'hunter2');
});

test('no route: 404 NOT_FOUND, and a HEAD there a bare 204; a POST body not in JSON: 415, before any context is made', async ({ adapter }) => {
  const nowhere = await call(adapter, 'GET', '/nowhere');
  assert.is(nowhere.status, 404);
  assert.is(nowhere.body.code, 'NOT_FOUND');
  assert.is((await call(adapter, 'POST', '/ping', { json: {} })).status, 404, 'a route is its method and its path');
  const head = await call(adapter, 'HEAD', '/nowhere');
  assert.is(head.status, 204);
  assert.is(head.text, '');

  const contexts = adapter.contexts;
  for (const type of ['text/plain', undefined]) {
    const answer = await call(adapter, 'POST', '/things', { body: '{"name":"lamp","count":2}', type });
    assert.is(answer.status, 415, String(type));
    assert.is(answer.body.code, 'UNSUPPORTED_MEDIA_TYPE');
  }
  assert.is(adapter.contexts, contexts, 'the procedure was never reached');
});

test("the adapter logs its own faults, not a procedure's: a context that cannot be made is a logged 500", async ({ adapter }) => {
  const before = adapter.logged.length;
  await call(adapter, 'GET', '/broken');
  await call(adapter, 'DELETE', '/things/7');
  assert.is(adapter.logged.length, before, "a procedure's failure is logged where tRPC settles it, not here");

  const failing = await startAdapter(() => {
    throw new Error('no context today');
  });
  try {
    const answer = await call(failing, 'GET', '/ping');
    assert.is(answer.status, 500);
    assert.is(answer.body.code, 'INTERNAL_ERROR');
    assert.equal(failing.logged.map(({ level, message }) => [level, message]), [['error', 'unexpected error']]);
    assert.match(String(failing.logged[0].fields.err), 'no context today');
  } finally {
    await failing.close();
  }
});

test('a route found first (the gateway dispatch) is answered byte for byte as the handler answers it alone, for each success and failure', async ({ adapter }) => {
  const found = await startAdapter(undefined, { found: true });
  try {
    const requests: Array<[string, string, { json?: unknown; body?: string; type?: string }?]> = [
      ['GET', '/ping'],
      ['GET', '/owners/ann/things?limit=60&tags=red'],
      ['GET', '/owners/ann/things?limit=ten&extra=1'],
      ['GET', '/OWNERS/ann/things/?limit=2'],
      ['POST', '/things', { json: { name: 'box', count: 2 } }],
      ['POST', '/things', { json: { name: '', count: '2' } }],
      ['POST', '/things', { body: 'name=box', type: 'application/x-www-form-urlencoded' }],
      ['DELETE', '/things/t1'],
      ['POST', '/slow-down', { json: {} }],
      ['GET', '/who'],
      ['GET', '/broken'],
    ];
    for (const [method, path, init] of requests) {
      const [alone, dispatched] = await Promise.all([call(adapter, method, path, init), call(found, method, path, init)]);
      const visible = (answer: Awaited<ReturnType<typeof call>>) => ({ status: answer.status, headers: [...answer.headers].filter(([name]) => name !== 'date'), text: answer.text });
      assert.equal(visible(dispatched), visible(alone), `${method} ${path}`);
    }
  } finally {
    await found.close();
  }
});

test('find gives the route and its pattern for a plain path, and nothing for one the URL parser would rewrite', () => {
  const handler = createOpenApiHandler({ router, logger: {} as Logger });
  const route = handler.find('GET', '/owners/ann/things');
  assert.equal({ path: route?.procedure.path, pathInput: { ...route?.pathInput }, pattern: route?.pattern }, { path: 'listThings', pathInput: { owner: 'ann' }, pattern: '/owners/{owner}/things' });
  assert.is(handler.find('GET', '/OWNERS/ann/things/')?.procedure.path, 'listThings', 'as the router matches: any case, one trailing slash');
  assert.is(handler.find('POST', '/owners/ann/things'), undefined, 'another method');
  for (const rewritten of ['/owners/%61nn/things', '/owners/x/../ann/things', '/owners/./things', '/owners/a{b}/things', '/owners\\ann/things', '/owners//things']) {
    assert.is(handler.find('GET', rewritten), undefined, rewritten);
  }
});

test.run();
