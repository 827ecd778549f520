import * as assert from 'uvu/assert';
import { testFetch, type HttpResult, type TestService } from './service.ts';

/** What a page answered; `csrf` is the token its forms carry, when it has any. */
export type PageResult = HttpResult & { csrf?: string; location?: string };

export const FORM_TYPE = 'application/x-www-form-urlencoded';

/** The value of the hidden (or any) input `name` in a page, unescaped as a browser would. */
export function inputValue(html: string, name: string): string | undefined {
  // Attribute values may hold a `>` (it needs no escaping there), so tags are read quote-aware.
  for (const [, attributes] of html.matchAll(/<input\b((?:[^>"]|"[^"]*")*)>/g)) {
    if (!new RegExp(`\\bname="${name}"`).test(attributes)) continue;
    const value = /\bvalue="([^"]*)"/.exec(attributes);
    return value ? value[1].replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&') : undefined;
  }
  return undefined;
}

type PostOptions = {
  /** The CSRF token to send: the last page's by default; null sends none. */
  csrf?: string | null;
  /** The Origin header: this service's by default, as a browser sends on every form POST; null sends none. */
  origin?: string | null;
  headers?: Record<string, string>;
  /** A raw body instead of the fields (for garbage). */
  body?: string;
};

/**
 * A browser without JavaScript, over fetch: it keeps the cookies it is given, reads the CSRF
 * token from the last page it was shown, and posts forms with its site's Origin. Redirects
 * are not followed, so tests see each 303.
 */
export function createVisitor(service: TestService) {
  const cookies = new Map<string, string>();
  let lastCsrf: string | undefined;

  const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  function keepCookies(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      if (attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute)) || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
  }
  async function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<PageResult> {
    const cookie = cookieHeader();
    const response = await testFetch(service.url + path, { method, body, redirect: 'manual', headers: { ...(cookie ? { cookie } : {}), ...headers } });
    keepCookies(response);
    const text = await response.text();
    const csrf = inputValue(text, 'csrf_token');
    if (csrf) lastCsrf = csrf;
    return { status: response.status, headers: response.headers, body: undefined, text, csrf, location: response.headers.get('location') ?? undefined };
  }

  return {
    cookies,
    get csrf() {
      return lastCsrf;
    },
    get: (path: string, headers: Record<string, string> = {}) => send('GET', path, headers),
    post(path: string, fields: Record<string, string>, options: PostOptions = {}): Promise<PageResult> {
      const csrf = options.csrf === undefined ? lastCsrf : options.csrf;
      const origin = options.origin === undefined ? service.url : options.origin;
      const body = options.body ?? new URLSearchParams({ ...(csrf === null || csrf === undefined ? {} : { csrf_token: csrf }), ...fields }).toString();
      const headers: Record<string, string> = { 'content-type': FORM_TYPE, ...(origin === null ? {} : { origin }), ...options.headers };
      return send('POST', path, headers, body);
    },
  };
}

export type Visitor = ReturnType<typeof createVisitor>;

/** A visitor signed in through the login page. */
export async function signedInVisitor(service: TestService, email: string, password: string): Promise<Visitor> {
  const visitor = createVisitor(service);
  await visitor.get('/login');
  const answer = await visitor.post('/login', { email, password });
  assert.is(answer.status, 303, answer.text);
  assert.ok(visitor.cookies.get('svc_token'), 'signed in');
  return visitor;
}

/** Opens a mailed link's page, then presses its button (posts its form with the fields given). */
export async function submitLinkForm(service: TestService, page: string, fields: Record<string, string>): Promise<PageResult> {
  const visitor = createVisitor(service);
  const shown = await visitor.get(`${page}?token=${encodeURIComponent(fields.token ?? '')}`);
  assert.ok(shown.csrf, `${page} has a form with a CSRF token`);
  return visitor.post(page, fields);
}

export const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** A page with passkey buttons: their script and the WebAuthn library (files of the site), and the script's request for options. */
export const SCRIPTED_PAGE_CSP = `${PAGE_CSP}; script-src 'self'; connect-src 'self'`;

/** Whether a page loads the passkey script: the only script a page may load. */
export const loadsPasskeyScript = (html: string) => /<script src="\/assets\/passkeys\.[0-9a-f]{12}\.js"/.test(html);

/** The headers every page sends; a page that loads the passkey script may run scripts of the site, no other page any. */
export function assertPageHeaders(page: HttpResult): void {
  assert.match(page.headers.get('content-type') ?? '', 'text/html');
  assert.is(page.headers.get('content-security-policy'), loadsPasskeyScript(page.text) ? SCRIPTED_PAGE_CSP : PAGE_CSP);
  assert.not.match(page.text, /<script(?![^>]*\bsrc="\/assets\/)/, 'no inline script');
  assert.is(page.headers.get('referrer-policy'), 'no-referrer');
  assert.is(page.headers.get('x-frame-options'), 'DENY');
  assert.is(page.headers.get('cache-control'), 'no-store');
  assert.is(page.headers.get('x-content-type-options'), 'nosniff');
  for (const name of page.headers.keys()) assert.not.ok(name.startsWith('access-control-'), `a page sent ${name}`);
}
