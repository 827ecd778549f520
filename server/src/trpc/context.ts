import type { Deps } from '../deps.ts';
import { bearerToken, hostCookieName, readCookie } from '../lib/http-credentials.ts';

/** What a procedure may ask the transport to add to its answer (cookies, a 201). */
export type ResponseControl = { status?: number; headers: Array<[string, string]> };

export type Credentials = {
  /** The value after `Bearer ` in the Authorization header. */
  bearer?: string;
  /** The `svc_token` cookie. */
  cookie?: string;
  /** The device cookie: this client logged in to an account before (sessions.devices.ts). */
  device?: string;
};

/**
 * What the transport saw of a state-changing request that a browser could have sent: whether
 * it came from another site (`Origin`, else `Sec-Fetch-Site`) and whether it was JSON, which
 * no HTML form can send. Absent for server-side callers, which no other site can drive.
 */
export type BrowserWrite = { crossSite: boolean; json: boolean };

/**
 * Who sent the request, as far as the transport can tell; sessions and the activity log keep
 * ip and user agent. `accountId` is set once a procedure has authenticated the caller: the
 * gateway keeps this object and its access log reads it after the answer.
 */
export type RequestInfo = { ip: string; userAgent?: string; requestId: string; browserWrite?: BrowserWrite; accountId?: number };

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
