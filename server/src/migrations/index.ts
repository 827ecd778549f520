import type { SecretBox } from '../lib/crypto.ts';
import type { Db, Queryable } from '../lib/db.ts';
import type { Logger } from '../lib/logger.ts';
import { migrationsApplied as applied } from '../lib/migration-status.ts';
import * as accounts from './0001-accounts.ts';
import * as webhooks from './0002-webhooks.ts';
import * as authNotify from './0003-auth-notify.ts';
import * as boundSecrets from './0004-bound-secrets.ts';
import * as accountLifecycle from './0005-account-lifecycle.ts';
import * as operatorSurface from './0006-operator-surface.ts';
import * as dataKeyCheck from './0007-data-key-check.ts';
import * as webhookSecretNotify from './0008-webhook-secret-notify.ts';
import * as secondFactor from './0009-second-factor.ts';
import * as identities from './0010-identities.ts';
import * as eventsOut from './0011-events-out.ts';
import * as eventHolds from './0012-event-holds.ts';
import * as pendingLink from './0013-pending-link.ts';
import * as operatorChatOrder from './0014-operator-chat-order.ts';
import * as linkTicketsAndAttempts from './0015-link-tickets-and-attempts.ts';
import * as sessionSecondStep from './0016-session-second-step.ts';
import * as adminConsole from './0017-admin-console.ts';

export type { MigrationContext } from './context.ts';

/** Listed rather than globbed so the set is typed and the same under tsx and in a bundle. */
export const MIGRATIONS = [
  { name: '0001-accounts', ...accounts },
  { name: '0002-webhooks', ...webhooks },
  { name: '0003-auth-notify', ...authNotify },
  { name: '0004-bound-secrets', ...boundSecrets },
  { name: '0005-account-lifecycle', ...accountLifecycle },
  { name: '0006-operator-surface', ...operatorSurface },
  { name: '0007-data-key-check', ...dataKeyCheck },
  { name: '0008-webhook-secret-notify', ...webhookSecretNotify },
  { name: '0009-second-factor', ...secondFactor },
  { name: '0010-identities', ...identities },
  { name: '0011-events-out', ...eventsOut },
  { name: '0012-event-holds', ...eventHolds },
  { name: '0013-pending-link', ...pendingLink },
  { name: '0014-operator-chat-order', ...operatorChatOrder },
  { name: '0015-link-tickets-and-attempts', ...linkTicketsAndAttempts },
  { name: '0016-session-second-step', ...sessionSecondStep },
  { name: '0017-admin-console', ...adminConsole },
];

const MIGRATION_NAMES = MIGRATIONS.map((migration) => migration.name);

export async function migrate(db: Db, logger: Logger, keys: { secretBox: SecretBox; dataKeys: Buffer[] }): Promise<string[]> {
  // Most starts have nothing to apply: one query says so, and umzug (with the command-line
  // tooling it brings, a fifth of a second to load) is loaded only when there is work.
  if (await migrationsApplied(db).catch(() => false)) return [];
  const { migrate: runUmzug } = await import('../lib/migrator.ts');
  return runUmzug(db, logger, MIGRATIONS, (tx) => ({ sql: (text, values) => tx.query(text, values), ...keys }));
}

export function migrationsApplied(db: Queryable): Promise<boolean> {
  return applied(db, MIGRATION_NAMES);
}
