import type { OpenAPIObject } from 'openapi3-ts/oas31';
import { escapeHtml } from '../../../server/src/lib/text.ts';

const json = (value: unknown) => `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;

/**
 * A self-contained page (no CDN scripts), so the docs work offline and under a strict CSP;
 * the raw document is one click away for tools such as Swagger UI or Postman.
 */
export function renderDocsPage(document: OpenAPIObject): string {
  const sections = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item ?? {}).map(([method, operation]) => {
      const op = operation as { summary?: string; requestBody?: unknown; responses?: Record<string, unknown>; security?: unknown[] };
      const body = op.requestBody ? `<h4>Request body</h4>${json(op.requestBody)}` : '';
      const responses = Object.entries(op.responses ?? {})
        .map(([status, response]) => `<details><summary>${escapeHtml(status)}</summary>${json(response)}</details>`)
        .join('');
      const auth = op.security?.length ? '<span class="auth">auth</span>' : '';
      return `<section><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code> ${auth}</h3>
        <p>${escapeHtml(op.summary ?? '')}</p>${body}<h4>Responses</h4>${responses}</section>`;
    }),
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(document.info.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:900px;margin:2rem auto;padding:0 1rem}
section{border:1px solid #ddd;border-radius:8px;padding:0 1rem;margin:1rem 0}.m{padding:2px 6px;border-radius:4px;color:#fff}
.get{background:#2563eb}.post{background:#16a34a}.auth{font-size:12px;background:#eee;padding:2px 6px;border-radius:4px}
pre{background:#f6f8fa;padding:.5rem;overflow:auto;font-size:12px}</style></head><body>
<h1>${escapeHtml(document.info.title)} <small>${escapeHtml(document.info.version)}</small></h1>
<p>${escapeHtml(document.info.description ?? '')}</p>
<p>Machine-readable: <a href="openapi.json">openapi.json</a>. Base URL: <code>${escapeHtml(document.servers?.[0]?.url ?? '')}</code></p>
${sections.join('\n')}
</body></html>`;
}
