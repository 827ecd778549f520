/**
 * The typed Gatehouse client for frontends and scripts.
 *
 *   const gatehouse = createGatehouseClient({ url: 'https://gatehouse.example/trpc', token: () => session.jwt });
 *   const { user } = await gatehouse.auth.me.query();
 *
 * Errors are `TRPCClientError`s; `error.data.appCode` is Gatehouse's stable error code
 * (`UNAUTHORIZED`, `VALIDATION_FAILED`, …) and `error.data.issues` lists validation problems.
 *
 * `gatehouse.accessToken('bookings')` is a short-lived token for another service of the
 * platform, which checks it on its own; it is asked for once and reused until shortly
 * before it expires.
 */
import { createTRPCClient, httpBatchLink, TRPCClientError, type TRPCClient } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from './app-router.ts';

export type { AppRouter };
export { TRPCClientError };

/** `RouterInputs['auth']['register']` is what `auth.register` takes. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** `RouterOutputs['auth']['me']['user']` is the account shape `auth.me` returns. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;

type MaybePromise<T> = T | Promise<T>;

export type GatehouseClientOptions = {
  /** The service's tRPC endpoint, e.g. `https://gatehouse.example/trpc`. */
  url: string;
  /**
   * A session JWT, or a function asked before every request for the current one (so a
   * login or logout takes effect without building a new client). Wins over `apiKey`.
   */
  token?: string | (() => MaybePromise<string | null | undefined>);
  /** An account's 64-hex API key, sent when there is no token. */
  apiKey?: string;
  /** A fetch to use instead of the global one (tests, older runtimes, cookie settings). */
  fetch?: typeof fetch;
  /** Extra headers on every request, e.g. `x-request-id`. */
  headers?: Record<string, string>;
  /** The time in milliseconds, for when a cached access token is due for renewal; `Date.now` unless given (tests move it). */
  now?: () => number;
};

export type GatehouseClient = TRPCClient<AppRouter> & {
  /**
   * An access token for `audience` (one of the service's `ACCESS_TOKEN_AUDIENCES`), made for
   * the current credential: asked for with `auth.accessToken` once, then the same token until
   * 30 seconds before it expires, or until the credential changes. Calls made meanwhile share
   * one request; a refused one (`TRPCClientError`) is not kept.
   */
  accessToken(audience: string): Promise<string>;
};

/** A token is asked for again this long before it expires, so that it never reaches a service expired. */
const RENEW_BEFORE_MS = 30_000;

type CachedToken = { credential: string | undefined; token: Promise<string>; renewAt: number };

export function createGatehouseClient(options: GatehouseClientOptions): GatehouseClient {
  const { url, token, apiKey, fetch: customFetch, headers } = options;
  const now = options.now ?? Date.now;
  const currentCredential = async () => (typeof token === 'function' ? await token() : token) || apiKey;
  const client = createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url,
        fetch: customFetch,
        async headers() {
          const credential = await currentCredential();
          return credential ? { ...headers, authorization: `Bearer ${credential}` } : { ...headers };
        },
      }),
    ],
  });
  // One entry per audience: a new credential replaces its token rather than adding one.
  const tokens = new Map<string, CachedToken>();
  async function accessToken(audience: string): Promise<string> {
    const credential = (await currentCredential()) || undefined;
    const cached = tokens.get(audience);
    if (cached && cached.credential === credential && now() < cached.renewAt) return cached.token;
    const entry: CachedToken = { credential, token: Promise.resolve(''), renewAt: Infinity };
    entry.token = client.auth.accessToken.mutate({ audience }).then(
      (answer) => {
        entry.renewAt = now() + answer.expires_in * 1000 - RENEW_BEFORE_MS;
        return answer.access_token;
      },
      (error: unknown) => {
        if (tokens.get(audience) === entry) tokens.delete(audience);
        throw error;
      },
    );
    tokens.set(audience, entry);
    return entry.token;
  }
  // tRPC's client is a proxy that takes every property name for a procedure path: the one
  // name of our own is answered here, any other goes to it.
  return new Proxy(client, {
    get: (target, property, receiver) => (property === 'accessToken' ? accessToken : Reflect.get(target, property, receiver)),
  }) as GatehouseClient;
}
