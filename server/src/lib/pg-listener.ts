import pg from 'pg';
import type { Logger } from './logger.ts';

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 10_000;
/**
 * A connection that died without a FIN (a dropped NAT entry, a frozen peer) raises no error,
 * and a deaf listener would keep serving rows it is never told about: a round trip this often
 * proves it alive (TCP keeps notifications sent before the answer ahead of it).
 */
const HEARTBEAT_MS = 5_000;

export type PgListenerOptions = {
  databaseUrl: string;
  channel: string;
  /** What the connection calls itself in pg_stat_activity. */
  applicationName: string;
  /** What listens, for the log: "auth cache" logs "auth cache on" and "auth cache off". */
  label: string;
  logger: Logger;
  /** Fires only once LISTEN has succeeded, after every (re)connect. */
  onListening(): void;
  onLost(): void;
  onNotification(payload: string): void;
};

/**
 * LISTEN on a connection of its own (LISTEN holds a pooled one forever, and the pool
 * recycles idle ones), reconnected with capped backoff.
 */
export function createPgListener(options: PgListenerOptions): { close(): Promise<void> } {
  const { databaseUrl, channel, applicationName, label, logger } = options;
  let client: pg.Client | undefined;
  let closed = false;
  let delay = BACKOFF_MIN_MS;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const lost = (from: pg.Client, error?: Error): Promise<void> | undefined => {
    if (from !== client) return undefined;
    client = undefined;
    clearInterval(heartbeat);
    options.onLost();
    const ended = from.end().catch(() => undefined);
    if (closed) return ended;
    logger.warn({ err: error, channel, retryInMs: delay }, `${label} off: its LISTEN connection is gone`);
    retry = setTimeout(connect, delay).unref();
    delay = Math.min(delay * 2, BACKOFF_MAX_MS);
    return ended;
  };

  const connect = () => {
    const next = new pg.Client({
      connectionString: databaseUrl,
      application_name: applicationName,
      connectionTimeoutMillis: HEARTBEAT_MS,
      query_timeout: HEARTBEAT_MS,
    });
    client = next;
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next));
    next.on('notification', (message) => {
      if (message.channel === channel) options.onNotification(message.payload ?? '');
    });
    next
      .connect()
      .then(() => next.query(`LISTEN ${channel}`))
      .then(() => {
        if (next !== client) return;
        delay = BACKOFF_MIN_MS;
        heartbeat = setInterval(() => next.query('SELECT 1').catch((error: Error) => lost(next, error)), HEARTBEAT_MS).unref();
        options.onListening();
        logger.info({ channel }, `${label} on: listening`);
      })
      .catch((error: Error) => lost(next, error));
  };

  connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      if (client) await lost(client);
    },
  };
}
