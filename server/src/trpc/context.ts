import type { Deps } from '../deps.ts';
import { bearerToken, hostCookieName, readCookie } from '../lib/http-credentials.ts';
import type { Credentials, RequestInfo } from '../lib/request.ts';

export type { BrowserWrite, Credentials, RequestInfo } from '../lib/request.ts';

/** A session the answer hands over: its token, and the device token of a client new to the account, each with how long to keep it. */
export type SessionHandover = { token: string; maxAgeSeconds: number; device?: { token: string; maxAgeSeconds: number } };

/**
 * What a procedure asks the transport to add to its answer: a status other than 200
 * (register's 201), a session begun (`signedIn`) or ended (`signedOut`). The transport knows
 * how a browser keeps them: the gateway sets or clears the cookies (gateway/src/procedure-context.ts).
 */
export type ResponseControl = { status?: number; signedIn?: SessionHandover; signedOut?: boolean };

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
  return { deps, credentials, request, response: {} };
}

export const SESSION_COOKIE = 'svc_token';
export const DEVICE_COOKIE = 'svc_device';
/**
 * The device cookie's name over https: a browser keeps a `__Host-` cookie only if it came
 * with Secure and Path=/ and without Domain, so a subdomain cannot plant or widen one.
 */
export const HOST_DEVICE_COOKIE = `__Host-${DEVICE_COOKIE}`;

/** The name the device cookie is set under: `__Host-` where the service is reached over https. */
export const deviceCookieName = (publicUrl: string) => hostCookieName({ publicUrl }, DEVICE_COOKIE);

export function credentialsFromHeaders(headers: { authorization?: string; cookie?: string }): Credentials {
  // Both names, whatever PUBLIC_URL says: a `__Host-` one only ever arrives over https, and
  // a plain one set before the switch to it keeps counting until it expires.
  const device = readCookie(headers.cookie, HOST_DEVICE_COOKIE) ?? readCookie(headers.cookie, DEVICE_COOKIE);
  if (headers.authorization) {
    return { bearer: bearerToken(headers.authorization) ?? '', device };
  }
  return { cookie: readCookie(headers.cookie, SESSION_COOKIE), device };
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
