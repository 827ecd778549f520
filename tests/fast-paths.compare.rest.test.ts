import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createGateway } from '../gateway/src/app.ts';
import { appRouter } from '../server/src/router.ts';
import { registerAndVerify, type Account } from './helpers/auth.ts';
import { serveInProcess, startTestApp, testFetch, type TestService } from './helpers/service.ts';

// FAST_PATHS=off answers REST with trpc-to-openapi's own handler behind the router
// (gateway/src/fast-paths/). Here the same service's gateway is built both ways, in one
// process on one database, and every route of the OpenAPI document gets the same requests
// (no credentials, a bad one, good ones, bad JSON, the wrong type, fields where the route does
// not read them, unknown fields, HEAD): status, headers and body must be the same bytes. The
// requests are those that change nothing, so that the first answer cannot change the second.
//
// trpc-to-openapi's handler coerces a JSON body's strings by changing the procedure's input
// schema in place (gateway/src/fast-paths/stock-openapi-handler.ts): the answers with the fast
// paths on are all taken before the first answer with them off, and the schemas are put back
// as they were afterwards, for the files this process runs next.

type Answer = { status: number; headers: Array<[string, string]>; body: string };
type Probe = { label: string; method: string; path: string; headers: Record<string, string>; body?: string };
type Context_ = { service: TestService; account: Account; off: ReturnType<typeof serveInProcess>; offUrl: string; restoreSchemas: () => void };

/** Every zod definition reachable from the router's input schemas, with its `coerce` flag as it is now: a function that puts each back. */
function snapshotCoercion(): () => void {
  const seen = new Set<object>();
  const flags: Array<[Record<string, unknown>, unknown]> = [];
  const visit = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    const def = (value as { _def?: Record<string, unknown> })._def;
    if (def && !seen.has(def)) {
      seen.add(def);
      flags.push([def, def.coerce]);
      for (const key of ['shape', 'innerType', 'element', 'options', 'in', 'out', 'left', 'right', 'items', 'valueType']) {
        const inner = def[key];
        if (Array.isArray(inner)) inner.forEach(visit);
        else if (key === 'shape' && inner && typeof inner === 'object') Object.values(inner).forEach(visit);
        else visit(inner);
      }
    }
  };
  for (const procedure of Object.values(appRouter._def.procedures as unknown as Record<string, { _def: { inputs: unknown[] } }>)) procedure._def.inputs.forEach(visit);
  return () => {
    for (const [def, coerce] of flags) {
      if (coerce === undefined) delete def.coerce;
      else def.coerce = coerce;
    }
  };
}

const test = suite<Context_>('fast paths: the REST answers with FAST_PATHS=off are the same bytes as with them on');

test.before(async (context) => {
  context.restoreSchemas = snapshotCoercion();
  context.service = await startTestApp();
  context.account = await registerAndVerify(context.service, 'fast-paths@example.com');
  const { deps } = context.service;
  // The service's own deps, the switch off; its in-flight gauge stays the service's gateway's.
  const gateway = createGateway({ ...deps, config: { ...deps.config, fastPaths: false }, metrics: { ...deps.metrics, readRequestsInFlightFrom: () => {} } });
  context.off = serveInProcess(gateway.app.callback());
  context.offUrl = context.off.url;
});

test.after(async (context) => {
  context.restoreSchemas?.();
  context.off?.close();
  await context.service?.close();
});

/** Everything of an answer but its Date (and the connection's own headers). */
async function answerOf(base: string, probe: Probe): Promise<Answer> {
  const response = await testFetch(`${base}${probe.path}`, { method: probe.method, headers: probe.headers, body: probe.body, redirect: 'manual' });
  const headers = [...response.headers].filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name));
  return { status: response.status, headers, body: await response.text() };
}

/** A passkey challenge is new on every answer, of the same length: the one value compared by its shape. */
const withoutChallenge = (answer: Answer) => ({ ...answer, body: answer.body.replace(/"challenge":"[\w-]{43}"/g, '"challenge":"<43 characters>"') });

type Operation = { parameters?: Array<{ name: string; in: string }>; requestBody?: { content?: Record<string, { schema?: { required?: string[]; additionalProperties?: unknown } }> } };

/** The requests every route gets. None can change anything: each fails before the procedure acts, or only reads. */
function probesOf(method: string, path: string, operation: Operation, account: Account): Probe[] {
  const concrete = `/api/v1${path.replace(/\{[^}]+\}/g, '12345')}`;
  const upper = method.toUpperCase();
  const json = { 'content-type': 'application/json' };
  const key = { authorization: `Bearer ${account.apiKey}` };
  const wrongKey = { authorization: 'Bearer gh_not-a-key' };
  const probes: Probe[] = [
    { label: 'no credentials', method: upper, path: concrete, headers: upper === 'GET' ? {} : json, body: upper === 'GET' ? undefined : '{}' },
    { label: 'a wrong credential', method: upper, path: concrete, headers: { ...wrongKey, ...json }, body: upper === 'GET' ? undefined : '{}' },
  ];
  const reads = upper === 'GET';
  if (reads) {
    probes.push(
      { label: 'the API key', method: 'GET', path: concrete, headers: key },
      { label: 'HEAD with the API key', method: 'HEAD', path: concrete, headers: key },
      { label: 'garbage in the query', method: 'GET', path: `${concrete}?limit=-1&cursor=%00%ff&__garbage=1&__garbage=2`, headers: key },
      { label: 'a body on a GET', method: 'GET', path: concrete, headers: { ...key, ...json } },
    );
    return probes;
  }
  const schema = operation.requestBody?.content?.['application/json']?.schema;
  probes.push(
    { label: 'bad JSON', method: upper, path: concrete, headers: { ...key, ...json }, body: '{"a":' },
    { label: 'not JSON', method: upper, path: concrete, headers: { ...key, 'content-type': 'text/plain' }, body: 'hello' },
    { label: 'a JSON array', method: upper, path: concrete, headers: { ...key, ...json }, body: '[1,2]' },
    { label: 'a field in the query', method: upper, path: `${concrete}?grace_seconds=60`, headers: { ...key, ...json }, body: '{}' },
  );
  if (upper === 'DELETE') probes.push({ label: 'a field in the body of a DELETE', method: upper, path: concrete, headers: { ...key, ...json }, body: '{"grace_seconds":60}' });
  // Refused as unknown before anything is done, where the body's schema allows no others.
  if (schema?.additionalProperties === false) {
    probes.push({ label: 'an unknown field', method: upper, path: concrete, headers: { ...key, ...json }, body: '{"__garbage":[1,{"a":null}]}' });
  }
  return probes;
}

test('every route of the OpenAPI document answers the same requests with the same bytes both ways', async ({ service, account, offUrl }) => {
  const document = await (await testFetch(`${service.url}/api/v1/openapi.json`)).json();
  const probes: Probe[] = [
    { label: 'no such route', method: 'GET', path: '/api/v1/no/such/route', headers: {} },
    { label: 'no such route, as HEAD', method: 'HEAD', path: '/api/v1/no/such/route', headers: {} },
    { label: 'a route in capitals', method: 'GET', path: '/API/V1/auth/me', headers: { authorization: `Bearer ${account.apiKey}` } },
    { label: 'a path with dot segments', method: 'GET', path: '/api/v1/auth/x/../me', headers: { authorization: `Bearer ${account.apiKey}` } },
    { label: 'a method the route lacks', method: 'PUT', path: '/api/v1/auth/me', headers: { 'content-type': 'application/json' }, body: '{}' },
  ];
  let routes = 0;
  for (const [path, operations] of Object.entries<Record<string, Operation>>(document.paths)) {
    // The webhook routes are in the document, and not REST's: they are compared in their own tests.
    if (path.startsWith('/webhooks') || path.startsWith('/audit')) continue;
    for (const [method, operation] of Object.entries(operations)) {
      routes++;
      probes.push(...probesOf(method, path, operation, account));
    }
  }
  assert.ok(routes > 50, `the document's REST routes (${routes}) were found`);
  const withId = (probe: Probe, n: number) => ({ ...probe, headers: { ...probe.headers, 'x-request-id': `compare-${n}` } });
  const on: Answer[] = [];
  for (const [n, probe] of probes.entries()) on.push(withoutChallenge(await answerOf(service.url, withId(probe, n))));
  const differ: string[] = [];
  for (const [n, probe] of probes.entries()) {
    const off = withoutChallenge(await answerOf(offUrl, withId(probe, n)));
    if (JSON.stringify(on[n]) !== JSON.stringify(off)) differ.push(`${probe.method} ${probe.path} (${probe.label}):\n  on:  ${JSON.stringify(on[n])}\n  off: ${JSON.stringify(off)}`);
  }
  assert.equal(differ, [], differ.join('\n'));
});

test('a request that succeeds and writes: the same answer, cookies included, from each', async ({ service, account, offUrl }) => {
  // Two logins of the same account: each sets a new session cookie, so only the cookie's name and attributes can agree.
  const login = (base: string) =>
    answerOf(base, { label: 'login', method: 'POST', path: '/api/v1/auth/login', headers: { 'content-type': 'application/json', 'x-request-id': 'compare-login' }, body: JSON.stringify({ email: account.email, password: account.password }) });
  const on = await login(service.url);
  const off = await login(offUrl);
  const shape = (answer: Answer) => ({
    status: answer.status,
    headers: answer.headers.map(([name, value]) => [name, name === 'set-cookie' ? value.replace(/=[^;]*/, '=…') : name === 'content-length' ? '…' : value]),
    body: Object.keys(JSON.parse(answer.body)),
  });
  assert.is(on.status, 200, on.body);
  assert.ok(on.headers.some(([name]) => name === 'set-cookie'), 'the login sets a cookie');
  assert.equal(shape(off), shape(on));
});

test.run();
