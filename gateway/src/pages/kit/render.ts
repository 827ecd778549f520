import type { VNode } from 'preact';
import { render } from 'preact-render-to-string';
import { pageAssets } from './assets.ts';

/** A page component as the HTML document sent; preact cannot render the doctype itself. */
export function renderDocument(page: VNode): string {
  return `<!doctype html>${render(page)}`;
}

/**
 * Whether a rendered page loads the passkey script (the layout's tag): only such a page's
 * CSP allows scripts. Text a person typed is escaped, so it cannot make a tag that matches.
 */
export function loadsScript(html: string): boolean {
  return html.includes(`<script src="${pageAssets.passkeys.href}"`);
}
