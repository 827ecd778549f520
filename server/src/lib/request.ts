// What a request is, apart from any transport: who sent it, with what credentials, and who
// acts for an operator's change. The gateway's adapters (REST, tRPC, pages) and the CLI fill
// them in; modules read them.

export type Credentials = {
  /** The value after `Bearer ` in the Authorization header. */
  bearer?: string;
  /** The `svc_token` cookie. */
  cookie?: string;
  /** The device cookie: this client logged in to an account before (sessions.issue.ts). */
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

/** Who acts: an admin account over the API, or the CLI (no account) on the server itself. */
export type Actor = { accountId: number | null; request: RequestInfo };
