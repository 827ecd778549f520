import type { Logger } from './logger.ts';
import { createPgListener } from './pg-listener.ts';

/** The channel migration 0003 notifies with the id of every account whose auth rows changed. */
export const ACCOUNT_CHANNEL = 'gatehouse_auth';
/** What the LISTEN connection calls itself in pg_stat_activity. */
export const ACCOUNT_NOTICES_APPLICATION_NAME = 'gatehouse-auth-cache';

/** The account a notice names; undefined for anything else ('*' after a TRUNCATE): forget everything. */
export function accountIdOfNotice(payload: string): number | undefined {
  const accountId = Number(payload);
  return /^[1-9][0-9]*$/.test(payload) && Number.isSafeInteger(accountId) ? accountId : undefined;
}

/** What keeps copies of accounts' rows: told when it may trust notices, when it may not, and of each change. */
export type NoticeListener = { listening(): void; lost(): void; notified(payload: string): void };

export interface AccountNotices {
  /** True only while the LISTEN connection is up: without it, changes would go unseen. */
  readonly up: boolean;
  /** A listener hears from now on, and at once that notices are up if they are. */
  subscribe(listener: NoticeListener): void;
  close(): Promise<void>;
}

/**
 * Changes to accounts' auth rows as other connections commit them, for every copy this process
 * keeps (the /me cache, the webhook secrets): one LISTEN connection for all. Without a
 * database server (`databaseUrl` unset: the embedded one, one process) or when `enabled` is
 * false, it is never up, and copies that rely on it stay off.
 */
export function createAccountNotices(options: { databaseUrl: string | undefined; enabled: boolean; logger: Logger }): AccountNotices {
  const listeners: NoticeListener[] = [];
  let up = false;
  const listener =
    options.enabled && options.databaseUrl
      ? createPgListener({
          databaseUrl: options.databaseUrl,
          channel: ACCOUNT_CHANNEL,
          applicationName: ACCOUNT_NOTICES_APPLICATION_NAME,
          label: 'auth cache',
          logger: options.logger,
          onListening: () => {
            up = true;
            for (const each of listeners) each.listening();
          },
          onLost: () => {
            up = false;
            for (const each of listeners) each.lost();
          },
          onNotification: (payload) => {
            for (const each of listeners) each.notified(payload);
          },
        })
      : undefined;
  return {
    get up() {
      return up;
    },
    subscribe(each) {
      listeners.push(each);
      if (up) each.listening();
    },
    close: async () => listener?.close(),
  };
}
