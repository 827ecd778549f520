import type { VNode } from 'preact';
import { render } from 'preact-render-to-string';

/** A page component as the HTML document sent; preact cannot render the doctype itself. */
export function renderDocument(page: VNode): string {
  return `<!doctype html>${render(page)}`;
}
