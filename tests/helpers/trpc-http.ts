import { request, type HttpResult, type TestService } from './service.ts';

/**
 * tRPC's HTTP protocol as a frontend speaks it (plain JSON, no transformer), for a caller with
 * a session token or none: what a procedure answers on the wire, status and error body
 * included, which the server-side caller of webhook-fixtures.ts cannot show.
 */
export function trpcOver(service: Pick<TestService, 'url'>) {
  const auth = (account?: { token: string }): Record<string, string> => (account ? { authorization: `Bearer ${account.token}` } : {});
  return {
    mutation(account: { token: string } | undefined, path: string, input?: unknown): Promise<HttpResult> {
      // No input: tRPC's own client posts an empty JSON body.
      if (input === undefined) return request(service.url, 'POST', `/trpc/${path}`, { headers: { ...auth(account), 'content-type': 'application/json' }, body: '' });
      return request(service.url, 'POST', `/trpc/${path}`, { headers: auth(account), json: input });
    },
    query(account: { token: string } | undefined, path: string, input?: unknown): Promise<HttpResult> {
      const search = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`;
      return request(service.url, 'GET', `/trpc/${path}${search}`, { headers: auth(account) });
    },
  };
}

export type TrpcHttp = ReturnType<typeof trpcOver>;

/** A procedure's result, from a successful answer. */
export const data = (res: { body: any }) => res.body.result.data;
