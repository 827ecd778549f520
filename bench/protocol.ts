/** What bench/serve.ts prints as its one `ready` line, and the commands it answers over IPC. */

/**
 * The service's log level in the bench: the level the targets were set at. The image's
 * default, `info`, adds a line per request (docs/OPERATIONS.md, Logs); the report says which.
 */
export const SERVICE_LOG_LEVEL = 'warn';

/** The audience the bench's service issues access tokens for (ACCESS_TOKEN_AUDIENCES). */
export const BENCH_AUDIENCE = 'bench';

export type SeededAccount = { email: string; password: string; apiKey: string; token: string };

/** A client site whose payment webhooks the ingest scenario delivers to. */
export type SeededSite = { siteKey: string; webhookSecret: string };

export type ServiceInfo = {
  type: 'ready';
  /** The service under test. */
  url: string;
  /** Its PUBLIC_URL: the origin WebAuthn answers name. */
  publicUrl: string;
  /** The bare Koa handler in the same process: the baseline. */
  bareUrl: string;
  /** A hand-written receiver of the site's payment webhooks in the same process, with its paths: ingest's references (ingest-floor.ts). */
  ingestFloorUrl: string;
  account: SeededAccount;
  site: SeededSite;
  /** The same service's gateway in the same process with FAST_PATHS=off: trpc-to-openapi's own REST handler (the fast-path rows). */
  stockHandlerUrl: string;
};

export type Command = { id: number; name: string; args: Record<string, unknown> };

export type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };
