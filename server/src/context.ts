import type { Deps } from './deps.ts';

/** What a procedure may ask the transport to add to its answer (cookies, a 201). */
export type ResponseControl = { status?: number; headers: Array<[string, string]> };

export type Credentials = {
  /** The value after `Bearer ` in the Authorization header. */
  bearer?: string;
  /** The `svc_token` cookie. */
  cookie?: string;
};

export type RequestInfo = { ip: string; userAgent?: string; requestId: string };

export type Context = {
  deps: Deps;
  credentials: Credentials;
  request: RequestInfo;
  response: ResponseControl;
};

/** Transport-free: tests and server-side callers build a context from plain values. */
export function createContextInner(
  deps: Deps,
  credentials: Credentials = {},
  request: RequestInfo = { ip: '127.0.0.1', requestId: 'internal' },
): Context {
  return { deps, credentials, request, response: { headers: [] } };
}

export const SESSION_COOKIE = 'svc_token';

function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) {
      const value = part.slice(index + 1).trim();
      return value || undefined;
    }
  }
  return undefined;
}

export function credentialsFromHeaders(headers: { authorization?: string; cookie?: string }): Credentials {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  if (headers.authorization) return { bearer: match?.[1] ?? '' };
  return { cookie: readCookie(headers.cookie, SESSION_COOKIE) };
}

/** For the HTTP adapters: credentials and request facts from a Node request. */
export function createContext(
  deps: Deps,
  req: { headers: Record<string, string | string[] | undefined> },
  request: RequestInfo,
): Context {
  const header = (name: string) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  return createContextInner(deps, credentialsFromHeaders({ authorization: header('authorization'), cookie: header('cookie') }), request);
}
