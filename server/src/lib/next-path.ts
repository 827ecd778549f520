/** Printable ASCII only: no spaces, tabs or line breaks (browsers drop those, turning `/\t/x` into `//x`). */
const PRINTABLE = /^[\x21-\x7e]+$/;
const PROBE_ORIGIN = 'http://gatehouse.invalid';
const MAX_LENGTH = 512;

/**
 * Where to send the browser after signing in: a path on this site, or undefined. Only a
 * single leading `/` followed by something that is not another `/` or `\`: `//host` and
 * `/\host` are other sites to a browser, `http:` and `javascript:` are not paths at all,
 * and a backslash anywhere is refused because browsers read it as `/`. What is left is
 * resolved against a placeholder origin, must stay on it, and is checked again as resolved.
 */
export function safeNextPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_LENGTH || !PRINTABLE.test(value)) return undefined;
  if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return undefined;
  let url: URL;
  try {
    url = new URL(value, PROBE_ORIGIN);
  } catch {
    return undefined;
  }
  if (url.origin !== PROBE_ORIGIN) return undefined;
  const path = `${url.pathname}${url.search}${url.hash}`;
  // Resolving dot segments can make `//` again: `/.//host` is `//host`.
  return path.startsWith('//') ? undefined : path;
}
