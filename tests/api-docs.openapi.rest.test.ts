import { createHmac, randomUUID } from 'node:crypto';
import { BaseResolver, createConfig, lintDocument, makeDocumentFromString } from '@redocly/openapi-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createOpenApiDocument, restRoutes } from '../gateway/src/routes/openapi-document.ts';
import { appRouter } from '../server/src/router.ts';
import { PROVIDERS } from '../server/src/webhooks/registry.ts';
import { assertError } from './helpers/auth.ts';
import { request, type TestService } from './helpers/service.ts';
import { post, startWithOwner, unixNow, type Caller } from './helpers/webhook-fixtures.ts';

type Scopes = { siteKey: string; paymentSecret: string; telegramChannel: string; telegramSecret: string; viberChannel: string; viberToken: string };
type Context = { service: TestService; caller: Caller; document: any; scopes: Scopes };
const test = suite<Context>('OpenAPI document: lints clean, every example fits its schema, every webhook route documented as it is checked');

const BILLING_SECRET = 'pdl_ntfset_docs_0123456789abcdef';
const OPERATOR_SECRET = 'op_docs_5f2a9c1e7b3d8f4a';
const VIBER_TOKEN = '4453b6ac1a2b3c-e02c5f12174805f9-daec9cbb5448c51f';

test.before(async (context) => {
  const { service, caller } = await startWithOwner({ BILLING_WEBHOOK_SECRET: BILLING_SECRET, OPERATOR_BOT_SECRET: OPERATOR_SECRET }, 'docs');
  context.service = service;
  context.caller = caller;
  context.document = (await request(service.url, 'GET', '/api/v1/openapi.json')).body;
  const paymentSecret = 'whsec_docs_0123456789abcdef';
  const site = await caller.sites.create({ name: 'Docs shop', paymentWebhookSecret: paymentSecret });
  const telegram = await caller.channels.create({ platform: 'messengerone', name: 'Docs TG', botToken: '123456:AA-docs-telegram-token' });
  const viber = await caller.channels.create({ platform: 'messengertwo', name: 'Docs Viber', botToken: VIBER_TOKEN });
  context.scopes = {
    siteKey: site.siteKey,
    paymentSecret,
    telegramChannel: telegram.channelId,
    telegramSecret: telegram.secretToken!,
    viberChannel: viber.channelId,
    viberToken: VIBER_TOKEN,
  };
});
test.after(async ({ service }) => {
  await service?.close();
});

type Operation = { path: string; method: string; operation: any };

function operations(document: any): Operation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, any>).map(([method, operation]) => ({ path, method, operation })),
  );
}

// The webhook routes and the key set sit at the root of PUBLIC_URL (a server of their own): no procedure is behind them.
const restOperations = (document: any) => operations(document).filter(({ operation }) => !operation.servers);
const hmacHex = (key: string, ...parts: string[]) => parts.reduce((hmac, part) => hmac.update(part), createHmac('sha256', key)).digest('hex');

test("Redocly's recommended rules report nothing, not even a warning", async ({ document }) => {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintDocument({
    document: makeDocumentFromString(JSON.stringify(document), '/openapi.json'),
    config,
    externalRefResolver: new BaseResolver(),
  });
  const described = problems.map((problem) => `${problem.ruleId} (${problem.severity}) at ${problem.location[0]?.pointer}: ${problem.message}`);
  assert.equal(described, []);
});

test('info, servers and tags: a license and contact, PUBLIC_URL/api/v1, every tag in use declared with a description', ({ service, document }) => {
  assert.ok(document.info.license?.name && (document.info.license.identifier || document.info.license.url));
  assert.ok(document.info.contact?.url);
  assert.is(document.servers.length, 1);
  assert.is(document.servers[0].url, `${service.env.PUBLIC_URL}/api/v1`);
  const declared = new Map<string, string>(document.tags.map((tag: { name: string; description: string }) => [tag.name, tag.description]));
  for (const { path, method, operation } of operations(document)) {
    assert.ok(operation.operationId, `${method} ${path} has an operationId`);
    assert.ok(operation.summary, `${method} ${path} has a summary`);
    assert.is(operation.tags.length, 1, `${method} ${path} has one tag`);
    assert.ok(declared.get(operation.tags[0]), `${method} ${path}: tag ${operation.tags[0]} is declared with a description`);
  }
  assert.equal([...declared.keys()].sort(), ['admin', 'auth', 'webhooks']);
});

test('security: public routes say [] outright, protected ones Bearer or cookie; webhooks carry none of ours', ({ document }) => {
  const publicRoutes = [
    '/auth/register',
    '/auth/verify-email',
    '/auth/resend-verification',
    '/auth/login',
    '/auth/login/mfa',
    '/auth/login/passkey/options',
    '/auth/login/passkey',
    '/auth/password/forgot',
    '/auth/password/reset',
    '/auth/email/confirm',
    '/auth/oauth/providers',
    '/.well-known/jwks.json',
  ];
  for (const { path, method, operation } of operations(document)) {
    assert.ok(Array.isArray(operation.security), `${method} ${path} states its security`);
    const isPublic = publicRoutes.includes(path) || operation.operationId.startsWith('webhook-');
    assert.equal(operation.security, isPublic ? [] : [{ bearer: [] }, { cookie: [] }], `${method} ${path}`);
  }
});

/** A number in the path (an account id, given as a number or its digits), rather than a uuid. */
const isNumeric = (schema: any): boolean =>
  schema?.type === 'integer' || schema?.type === 'number' || (schema?.anyOf ?? []).some((option: any) => option.type === 'integer' || option.type === 'number');

test("every request body and success answer has an example, and each passes the procedure's own schema", ({ document }) => {
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { inputs: any[]; output: any } }>;
  const rest = restOperations(document);
  assert.ok(rest.length >= 22, `${rest.length} REST operations`);
  for (const { path, method, operation } of rest) {
    const procedure = procedures[operation.operationId.replace('-', '.')];
    assert.ok(procedure, `${operation.operationId} is a procedure`);
    const body = operation.requestBody?.content['application/json'];
    if (body) {
      assert.ok(body.example !== undefined, `${method} ${path} has a request example`);
      // The procedure's input is the body with the path's parameters (a passkey's id) merged in.
      const pathParams = (operation.parameters ?? [])
        .filter((parameter: any) => parameter.in === 'path')
        .map((parameter: any) => [parameter.name, isNumeric(parameter.schema) ? 42 : '5b1f6c2e-8d3a-4e7b-9c1f-2a6d8e0b4c3f']);
      const parsed = procedure._def.inputs[0].safeParse({ ...body.example, ...Object.fromEntries(pathParams) });
      assert.ok(parsed.success, `${method} ${path} request example: ${JSON.stringify(parsed.error?.issues)}`);
    }
    const [status, success] = Object.entries(operation.responses as Record<string, any>).find(([code]) => Number(code) < 400)!;
    const [mediaType, media] = Object.entries(success.content as Record<string, any>)[0];
    const example = media.example;
    assert.ok(example !== undefined, `${method} ${path} ${status} has an example`);
    // A stream's example is one of its lines: over tRPC, an item of the procedure's page.
    const schema = mediaType === 'application/x-ndjson' ? procedure._def.output.shape.items.element : procedure._def.output;
    const parsed = schema.safeParse(example);
    assert.ok(parsed.success, `${method} ${path} answer example: ${JSON.stringify(parsed.error?.issues)}`);
  }
});

test('the auth routes keep the paths, statuses and shapes the contract and older suites hold', ({ document }) => {
  const statuses = (path: string, method: string) => Object.keys(document.paths[path][method].responses).sort();
  // 408 and 431 on every route: Node answers them before any route is found (gateway/src/server.ts).
  assert.equal(statuses('/auth/register', 'post'), ['201', '400', '408', '413', '415', '429', '431', '500', '503']);
  assert.equal(statuses('/auth/login', 'post'), ['200', '400', '401', '403', '408', '413', '415', '429', '431', '500', '503']);
  assert.equal(statuses('/auth/me', 'get'), ['200', '400', '401', '408', '431', '500', '503']);
  // The REST error answers never list the codes only webhooks give.
  const restCodes = restOperations(document).flatMap(({ operation }) =>
    Object.values(operation.responses as Record<string, any>).flatMap((response) => response.content?.['application/json']?.schema?.allOf?.[1]?.properties.code.enum ?? []),
  );
  assert.not.ok(restCodes.includes('INVALID_SIGNATURE'));
  assert.not.ok(restCodes.includes('INVALID_PAYLOAD'));
});

test('every webhook route of the registry is documented: its path, signature header, statuses and server', ({ service, document }) => {
  const webhooks = operations(document).filter(({ operation }) => operation.operationId.startsWith('webhook-'));
  assert.is(webhooks.length, PROVIDERS.length);
  const headers: Record<string, string> = {};
  for (const provider of PROVIDERS) {
    const found = webhooks.find(({ operation }) => operation.operationId === `webhook-${provider.name}`);
    assert.ok(found, `${provider.route} is documented`);
    const { path, method, operation } = found;
    assert.is(method, 'post');
    assert.is(path.replace(/\{\w+\}/, ':scope'), provider.route);
    assert.equal(operation.servers, [{ url: service.env.PUBLIC_URL, description: operation.servers[0].description }]);
    assert.equal(operation.tags, ['webhooks']);
    const header = operation.parameters.filter((p: any) => p.in === 'header');
    assert.is(header.length, 1);
    assert.is(header[0].required, true);
    headers[provider.name] = header[0].name;
    const pathParams = operation.parameters.filter((p: any) => p.in === 'path');
    assert.is(pathParams.length, provider.scope ? 1 : 0);
    assert.ok(operation.requestBody.required);
    assert.ok(operation.requestBody.content['application/json'].example);
    const expected = provider.scope ? ['200', '400', '401', '404', '413', '503'] : ['200', '400', '401', '413', '503'];
    assert.equal(Object.keys(operation.responses).sort(), expected);
    assert.equal(operation.responses['401'].content['application/json'].schema.allOf[1].properties.code.enum, ['INVALID_SIGNATURE']);
    assert.equal(operation.responses['200'].content['application/json'].example, { ok: true });
  }
  assert.equal(headers, {
    billing: 'Paddle-Signature',
    payment: 'Stripe-Signature',
    operator: 'X-Telegram-Bot-Api-Secret-Token',
    messengerone: 'X-Telegram-Bot-Api-Secret-Token',
    messengertwo: 'X-Viber-Content-Signature',
  });
  // The unscoped endpoints name the variable whose absence makes them answer 503.
  assert.match(document.paths['/billingprovider/webhook'].post.responses['503'].description, 'BILLING_WEBHOOK_SECRET');
  assert.match(document.paths['/messengerone/webhook'].post.responses['503'].description, 'OPERATOR_BOT_SECRET');
});

test("each documented webhook example, signed under the documented header, is taken (200); unsigned, 401; unknown scope, 404", async ({ service, document, scopes }) => {
  const now = String(unixNow(service));
  const sign: Record<string, (body: string) => string> = {
    billing: (body) => `ts=${now};h1=${hmacHex(BILLING_SECRET, `${now}:`, body)}`,
    payment: (body) => `t=${now},v1=${hmacHex(scopes.paymentSecret, `${now}.`, body)}`,
    operator: () => OPERATOR_SECRET,
    messengerone: () => scopes.telegramSecret,
    messengertwo: (body) => hmacHex(scopes.viberToken, body),
  };
  const scopeOf: Record<string, string> = { payment: scopes.siteKey, messengerone: scopes.telegramChannel, messengertwo: scopes.viberChannel };
  for (const provider of PROVIDERS) {
    const [path, item] = Object.entries(document.paths as Record<string, any>).find(([, i]) => i.post?.operationId === `webhook-${provider.name}`)!;
    const operation = item.post;
    const header = operation.parameters.find((p: any) => p.in === 'header').name;
    const body = JSON.stringify(operation.requestBody.content['application/json'].example);
    const url = path.replace(/\{\w+\}/, scopeOf[provider.name] ?? '');
    const json = { 'content-type': 'application/json' };

    const taken = await post(service, url, body, { ...json, [header]: sign[provider.name](body) });
    assert.is(taken.status, 200, `${provider.name}: ${taken.text}`);
    assert.equal(taken.body, { ok: true });
    assertError(await post(service, url, body, json), 401, 'INVALID_SIGNATURE');
    if (provider.scope) {
      const unknown = path.replace(/\{\w+\}/, provider.name === 'payment' ? 'site_unknown' : randomUUID());
      assertError(await post(service, unknown, body, { ...json, [header]: sign[provider.name](body) }), 404, 'NOT_FOUND');
    }
  }
});

test('the webhook routes are documented, not mounted under /api/v1', async ({ service }) => {
  for (const path of ['/api/v1/billingprovider/webhook', '/api/v1/messengerone/webhook']) {
    assertError(await request(service.url, 'POST', path, { json: {} }), 404, 'NOT_FOUND');
  }
});

test('the REST routes the gateway mounts are the operations of the REST document, no more, no fewer', () => {
  // The gateway reads its route table from the procedures at start; the document is made on
  // first request. Both must name the same routes, or one of them answers 404 where the other documents one.
  const document = createOpenApiDocument('http://127.0.0.1', '/api/v1');
  const documented = Object.entries(document.paths ?? {}).flatMap(([path, item]) => Object.keys(item as object).map((method) => `${method} ${path}`));
  const mounted = restRoutes().map(({ method, path }) => `${method} ${path}`);
  assert.ok(documented.length >= 27, documented.join('\n'));
  assert.equal([...mounted].sort(), [...documented].sort());
  assert.is(new Set(mounted).size, mounted.length, 'no route twice');
});

test.run();
