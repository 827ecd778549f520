import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

export type Asset = {
  /** The URL pages link to: the content's hash is in it, so it may be cached for good. */
  href: string;
  /** The same file under its plain name, revalidated by ETag (for links written by hand). */
  plainHref: string;
  type: string;
  body: Buffer;
  etag: string;
};

function loadAsset(file: string, type: string): Asset {
  const body = readFileSync(new URL(`./assets/${file}`, import.meta.url));
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const dot = file.lastIndexOf('.');
  return {
    href: `/assets/${file.slice(0, dot)}.${hash}${file.slice(dot)}`,
    plainHref: `/assets/${file}`,
    type,
    body,
    etag: `"${hash}"`,
  };
}

/**
 * The pages' static files, read once: a stylesheet (so that the CSP can say `style-src 'self'`
 * instead of allowing inline styles) and the icon. They ship with the source.
 */
export const pageAssets = {
  stylesheet: loadAsset('gatehouse.css', 'text/css; charset=utf-8'),
  icon: loadAsset('gatehouse.svg', 'image/svg+xml'),
};
