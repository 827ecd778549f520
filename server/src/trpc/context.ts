import type { Deps } from '../deps.ts';
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

/**
 * Transport-free: tests and server-side callers build a context from plain values. The
 * gateway builds its own from the request's headers (gateway/src/procedure-context.ts).
 */
export function createContextInner(
  deps: Deps,
  credentials: Credentials = {},
  request: RequestInfo = { ip: '127.0.0.1', requestId: 'internal' },
): Context {
  return { deps, credentials, request, response: {} };
}

export const SESSION_COOKIE = 'svc_token';
