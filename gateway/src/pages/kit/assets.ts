import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export type Asset = {
  /** The URL pages link to: the content's hash is in it, so it may be cached for good. */
  href: string;
  /** The same file under its plain name, revalidated by ETag (for links written by hand). */
  plainHref: string;
  type: string;
  body: Buffer;
  etag: string;
};

function asset(name: string, body: Buffer, type: string): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const dot = name.lastIndexOf('.');
  return {
    href: `/assets/${name.slice(0, dot)}.${hash}${name.slice(dot)}`,
    plainHref: `/assets/${name}`,
    type,
    body,
    etag: `"${hash}"`,
  };
}

function loadAsset(file: string, type: string): Asset {
  return asset(file, readFileSync(new URL(`./assets/${file}`, import.meta.url)), type);
}

/**
 * `@simplewebauthn/browser` as its UMD bundle (the global `SimpleWebAuthnBrowser`), read from
 * the installed package, as the docs page reads Swagger UI: the pages' script runs on it
 * without a build step, and the version served is the one package-lock.json pins.
 */
function loadWebAuthnBundle(): Asset {
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  const body = readFileSync(join(dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'));
  return asset('simplewebauthn-browser.js', body, 'text/javascript; charset=utf-8');
}

/**
 * The pages' static files, read once: a stylesheet (so that the CSP can say `style-src 'self'`
 * instead of allowing inline styles), the icon, and the passkey buttons' script with the
 * WebAuthn library it runs on (files, never inline, so that the CSP can say `script-src 'self'`).
 */
export const pageAssets = {
  stylesheet: loadAsset('gatehouse.css', 'text/css; charset=utf-8'),
  icon: loadAsset('gatehouse.svg', 'image/svg+xml'),
  webauthn: loadWebAuthnBundle(),
  passkeys: loadAsset('passkeys.js', 'text/javascript; charset=utf-8'),
};
