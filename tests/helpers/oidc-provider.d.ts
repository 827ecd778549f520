// oidc-provider ships no types: what tests/helpers/identity-providers.ts uses of it.
declare module 'oidc-provider' {
  import type { Server } from 'node:http';

  export type Account = { accountId: string; claims(use: string, scope: string): Promise<Record<string, unknown>> };
  export type Configuration = {
    clients: Array<Record<string, unknown>>;
    findAccount(ctx: unknown, sub: string): Promise<Account | undefined>;
    claims?: Record<string, string[]>;
    features?: Record<string, unknown>;
    cookies?: { keys: string[] };
    pkce?: { required?: () => boolean };
    conformIdTokenClaims?: boolean;
    [key: string]: unknown;
  };
  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    listen(port: number, host?: string): Server;
    on(event: string, listener: (...args: unknown[]) => void): void;
  }
}
