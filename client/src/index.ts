/**
 * The typed Gatehouse client for frontends and scripts.
 *
 *   const gatehouse = createGatehouseClient({ url: 'https://gatehouse.example/trpc', token: () => session.jwt });
 *   const { user } = await gatehouse.auth.me.query();
 *
 * Errors are `TRPCClientError`s; `error.data.appCode` is Gatehouse's stable error code
 * (`UNAUTHORIZED`, `VALIDATION_FAILED`, …) and `error.data.issues` lists validation problems.
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
};

export type GatehouseClient = TRPCClient<AppRouter>;

export function createGatehouseClient(options: GatehouseClientOptions): GatehouseClient {
  const { url, token, apiKey, fetch: customFetch, headers } = options;
  const currentCredential = async () => (typeof token === 'function' ? await token() : token) || apiKey;
  return createTRPCClient<AppRouter>({
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
}
