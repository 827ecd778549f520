import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertError } from './helpers/auth.ts';
import { request, startTestApp, testFetch, type TestService } from './helpers/service.ts';

type Context = { service: TestService; html: string; assets: string[] };
const test = suite<Context>('API docs page over HTTP: a strict CSP, no inline script, its files from an allow-list with long caching');

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** A GET whose body comes back as sent: testFetch hands over the bytes the service wrote, gzip and all. */
async function rawGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  const answer = await testFetch(url, { headers });
  return { status: answer.status, headers: Object.fromEntries(answer.headers), body: Buffer.from(await answer.arrayBuffer()) };
}

test.before(async (context) => {
  context.service = await startTestApp();
  const page = await request(context.service.url, 'GET', '/api/v1/docs');
  context.html = page.text;
  context.assets = [...page.text.matchAll(/(?:src|href)="(\/api\/v1\/docs\/assets\/[^"]+)"/g)].map((match) => match[1]);
});
test.after(async ({ service }) => {
  await service?.close();
});

test('the page: a CSP that allows this origin only, no inline script or style, nothing from elsewhere', async ({ service, html }) => {
  const page = await request(service.url, 'GET', '/api/v1/docs');
  assert.is(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', 'text/html');
  const csp = (page.headers.get('content-security-policy') ?? '').split(';').map((directive) => directive.trim());
  assert.equal(csp.sort(), [
    "base-uri 'none'",
    "connect-src 'self'",
    "default-src 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "img-src 'self' data:",
    "script-src 'self'",
    "style-src 'self'",
  ]);
  assert.is(page.headers.get('x-frame-options'), 'DENY');
  assert.is(page.headers.get('x-content-type-options'), 'nosniff');
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.is(scripts.length, 2);
  assert.is(html.match(/<script\b/g)?.length, 2);
  for (const [, attributes, content] of scripts) {
    assert.match(attributes, /^ src="\/api\/v1\/docs\/assets\/[^"]+"$/);
    assert.is(content, '', 'no inline code');
  }
  assert.not.match(html, /<style|\sstyle=|\son\w+=/);
  assert.not.match(html, /(?:src|href)="(?:https?:)?\/\//);
});

test('without JavaScript, the page still lists every route (webhooks too) and links the document', async ({ html }) => {
  for (const [method, path] of [['POST', '/auth/register'], ['GET', '/auth/me'], ['GET', '/admin/inbox'], ['POST', '/billingprovider/webhook'], ['POST', '/webhook/payment/{siteKey}'], ['POST', '/messengertwo/bot/{channelId}']]) {
    assert.match(html, `${method}</span> <code>${path}</code>`);
  }
  assert.match(html, 'href="/api/v1/openapi.json"');
});

test('the files the page names: served from the package, typed, cached a year, gzipped for clients that take it', async ({ service, assets }) => {
  assert.equal(assets.map((path) => path.split('/').pop()).sort(), ['docs-init.js', 'favicon-32x32.png', 'swagger-ui-bundle.js', 'swagger-ui.css']);
  const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', png: 'image/png' };
  for (const path of assets) {
    const name = path.split('/').pop()!;
    const plain = await rawGet(service.url + path);
    assert.is(plain.status, 200, path);
    assert.is(plain.headers['content-type'], types[name.split('.').pop()!]);
    assert.is(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.is(plain.headers['content-encoding'], undefined);
    assert.is(plain.headers['access-control-allow-origin'], undefined);
    if (name !== 'docs-init.js') assert.ok(plain.body.equals(readFileSync(join(SWAGGER_UI_DIR, name))), `${name} is the package's own file`);
    if (name.endsWith('.png') || name === 'docs-init.js') continue;
    const zipped = await rawGet(service.url + path, { 'accept-encoding': 'gzip, deflate, br' });
    assert.is(zipped.headers['content-encoding'], 'gzip');
    assert.match(String(zipped.headers.vary), /accept-encoding/i);
    assert.ok(zipped.body.length < plain.body.length / 2, `${name} compresses`);
    assert.ok(gunzipSync(zipped.body).equals(plain.body));
  }
  const init = await rawGet(service.url + assets.find((path) => path.endsWith('/docs-init.js'))!);
  assert.match(init.body.toString(), 'SwaggerUIBundle(');
  assert.match(init.body.toString(), 'validatorUrl: null');
});

test('anything else under the assets path is a 404: other package files, source maps, traversal, another release', async ({ service, assets }) => {
  const base = assets[0].slice(0, assets[0].lastIndexOf('/'));
  const refused = [
    `${base}/index.html`,
    `${base}/swagger-initializer.js`,
    `${base}/swagger-ui-bundle.js.map`,
    `${base}/swagger-ui-standalone-preset.js`,
    `${base}/package.json`,
    `${base}/..%2Fpackage.json`,
    `${base}/..%2F..%2F..%2F..%2Fpackage.json`,
    `${base}/%2e%2e%2f%2e%2e%2fserver%2fsrc%2fconfig.ts`,
    `${base}/constructor`,
    `${base}/__proto__`,
    '/api/v1/docs/assets/0.0.0-00000000/swagger-ui-bundle.js',
    '/api/v1/docs/assets/swagger-ui-bundle.js',
  ];
  for (const path of refused) assertError(await request(service.url, 'GET', path), 404, 'NOT_FOUND');
  for (const path of ['/api/v1/docs/assets/../../../package.json', `${base}/../../../../package.json`]) {
    // fetch resolves dot segments itself: whatever it asks for, no file of the tree comes back.
    const answer = await request(service.url, 'GET', path);
    assert.ok(answer.status === 404, `${path}: ${answer.status}`);
  }
  const posted = await request(service.url, 'POST', assets[0], { json: {} });
  assertError(posted, 405, 'METHOD_NOT_ALLOWED');
});

test('GET /api/v1/openapi.json: the published document, webhook routes included, never cached', async ({ service }) => {
  const answer = await request(service.url, 'GET', '/api/v1/openapi.json');
  assert.is(answer.status, 200);
  assert.is(answer.headers.get('cache-control'), 'no-store');
  assert.ok(answer.body.paths['/auth/login'].post);
  assert.ok(answer.body.paths['/billingprovider/webhook'].post);
});

test.run();
