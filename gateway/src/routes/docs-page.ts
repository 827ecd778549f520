import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import type { OpenAPIObject } from 'openapi3-ts/oas31';
import { AppError, escapeHtml, type Deps } from '../../../server/src/index.ts';
import { withAuditExportRoute } from './audit-export.ts';
import { withJwksRoute } from './jwks.ts';
import { createOpenApiDocument } from './openapi-document.ts';
import { withWebhookRoutes } from './openapi-webhooks.ts';

const API_PREFIX = '/api/v1';
const DOCS_PATH = `${API_PREFIX}/docs`;
const SPEC_PATH = `${API_PREFIX}/openapi.json`;

const require = createRequire(import.meta.url);
const SWAGGER_UI_DIR = dirname(require.resolve('swagger-ui-dist/package.json'));
const SWAGGER_UI_VERSION: string = require('swagger-ui-dist/package.json').version;

/**
 * Starts Swagger UI on the element that names the document. A file of its own, because the
 * page allows scripts from this origin only, never inline ones. No validator badge (it would
 * send the document to validator.swagger.io), and a token typed into Authorize stays in
 * memory, never in localStorage.
 */
const INITIALIZER = `"use strict";
(function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-spec-url"),
    domNode: root,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: false,
    displayRequestDuration: true,
    defaultModelsExpandDepth: 0
  });
})();
`;

type Asset = { type: string; load(): Promise<Buffer>; compress: boolean };

const vendor = (file: string, type: string, compress = true): Asset => ({ type, compress, load: () => readFile(join(SWAGGER_UI_DIR, file)) });

/** The allow-list: only these names are served, and only from these sources. */
const ASSETS: Record<string, Asset> = {
  'swagger-ui-bundle.js': vendor('swagger-ui-bundle.js', 'text/javascript; charset=utf-8'),
  'swagger-ui.css': vendor('swagger-ui.css', 'text/css; charset=utf-8'),
  'favicon-32x32.png': vendor('favicon-32x32.png', 'image/png', false),
  'docs-init.js': { type: 'text/javascript; charset=utf-8', compress: false, load: async () => Buffer.from(INITIALIZER) },
};

/**
 * One segment for every asset URL, changed by a new Swagger UI or a new initializer, so the
 * files can be cached for a year: a page always names the files it was made with.
 */
const RELEASE = `${SWAGGER_UI_VERSION}-${createHash('sha256').update(INITIALIZER).digest('hex').slice(0, 8)}`;
const ASSET_BASE = `${DOCS_PATH}/assets/${RELEASE}`;

/**
 * What Swagger UI needs, and no more: its script and stylesheet from here; data: images (its
 * stylesheet's icons); fetch to this origin, for the document and for try-it (the webhook
 * routes are on this origin too). No 'unsafe-inline' styles: React sets its style props
 * through the CSSOM, which CSP does not govern, and nothing writes a style element (the
 * browser suite checks the page reports no violation).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** Each operation as a line, for a reader without JavaScript (and for the tests that read the HTML). */
function operationList(document: OpenAPIObject): string {
  const items = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item ?? {}).map(([method, operation]) => {
      const summary = (operation as { summary?: string }).summary ?? '';
      return `<li><span class="method">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code> ${escapeHtml(summary)}</li>`;
    }),
  );
  return `<ul>${items.join('\n')}</ul>`;
}

export function renderDocsPage(document: OpenAPIObject): { html: string; contentSecurityPolicy: string } {
  const title = escapeHtml(document.info.title);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${ASSET_BASE}/swagger-ui.css">
<link rel="icon" type="image/png" href="${ASSET_BASE}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui" data-spec-url="${SPEC_PATH}"></div>
<noscript>
<h1>${title} ${escapeHtml(document.info.version)}</h1>
<p>This page needs JavaScript to browse and try the routes. The document itself: <a href="${SPEC_PATH}">openapi.json</a>.</p>
${operationList(document)}
</noscript>
<script src="${ASSET_BASE}/swagger-ui-bundle.js"></script>
<script src="${ASSET_BASE}/docs-init.js"></script>
</body>
</html>
`;
  return { html, contentSecurityPolicy: CONTENT_SECURITY_POLICY };
}

type Loaded = { body: Buffer; gzipped?: Buffer };

/** Files are read (and compressed) on first request, not at start: most processes never serve them. */
function createAssetStore() {
  const loaded = new Map<string, Promise<Loaded>>();
  return (name: string, asset: Asset): Promise<Loaded> => {
    let entry = loaded.get(name);
    if (!entry) {
      entry = (async () => {
        const body = await asset.load();
        return asset.compress ? { body, gzipped: await promisify(gzip)(body) } : { body };
      })();
      // A failed read is not kept: the next request tries again.
      entry.catch(() => loaded.delete(name));
      loaded.set(name, entry);
    }
    return entry;
  };
}

function acceptsGzip(ctx: KoaContext): boolean {
  return ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
}

/**
 * GET /api/v1/openapi.json (the REST routes, the activity export's, the webhook routes and the key set's), GET /api/v1/docs
 * (Swagger UI on it) and the page's files under /api/v1/docs/assets/<release>/.
 */
export function mountApiDocs(router: Router, deps: Deps): void {
  const { publicUrl } = deps.config;
  // Made when first asked for, then kept: describing every schema is most of what a start
  // would otherwise spend on the gateway, for a page few requests ask for.
  let published: { document: OpenAPIObject; page: ReturnType<typeof renderDocsPage> } | undefined;
  const docs = () => {
    if (!published) {
      const document = withJwksRoute(withAuditExportRoute(withWebhookRoutes(createOpenApiDocument(publicUrl, API_PREFIX), publicUrl)), publicUrl);
      published = { document, page: renderDocsPage(document) };
    }
    return published;
  };
  const assetOf = createAssetStore();

  router.get(SPEC_PATH, (ctx) => {
    ctx.body = docs().document;
  });
  router.get(DOCS_PATH, (ctx) => {
    const { page } = docs();
    ctx.type = 'html';
    ctx.set('Content-Security-Policy', page.contentSecurityPolicy);
    ctx.set('X-Frame-Options', 'DENY');
    ctx.body = page.html;
  });
  router.get(`${DOCS_PATH}/assets/:release/:file`, async (ctx) => {
    const asset = ctx.params.release === RELEASE && Object.hasOwn(ASSETS, ctx.params.file) ? ASSETS[ctx.params.file] : undefined;
    if (!asset) throw new AppError('NOT_FOUND');
    const { body, gzipped } = await assetOf(ctx.params.file, asset);
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
    if (gzipped) ctx.vary('Accept-Encoding');
    if (gzipped && acceptsGzip(ctx)) {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = gzipped;
    } else {
      ctx.body = body;
    }
  });
}
