import type { RequestInfo } from '../trpc/context.ts';

/** Who acts: an admin account over the API, or the CLI (no account) on the server itself. */
export type Actor = { accountId: number | null; request: RequestInfo };
