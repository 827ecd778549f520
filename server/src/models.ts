import type { TableModel } from './lib/model.ts';
import { rateLimitsTable } from './lib/rate-limiter.ts';
import { schemaMigrationsTable } from './lib/schema-migrations.model.ts';
import { accountCountsTable, accountsTable, adminEmailPromotionsTable, emailTokensTable } from './modules/accounts/index.ts';
import { auditEventsTable } from './modules/activity/index.ts';
import { billingSubscriptionsTable } from './modules/billing/index.ts';
import { channelMessagesTable, channelsTable } from './modules/channels/index.ts';
import { EVENT_TABLES } from './modules/events/index.ts';
import { identitiesTable, linkTicketsTable } from './modules/identities/index.ts';
import { MFA_TABLES } from './modules/mfa/index.ts';
import { operatorChatsTable, operatorChatUpdatesTable, operatorLinkCodesTable } from './modules/notifications/index.ts';
import { sessionsTable } from './modules/sessions/index.ts';
import { paymentsTable, sitesTable } from './modules/sites/index.ts';
import { dataKeyCheckTable } from './secrets/data-key-check.ts';
import { webhookInboxTable } from './webhooks/inbox/model.ts';

/**
 * Every table of the schema, as its owner declares it (pg-boss keeps its own schema).
 * tests/models.schema.db.test.ts holds each against the migrated database, both ways: a
 * table without a model, or a model that drifted from its migration, fails there.
 */
export const MODELS: readonly TableModel[] = [
  accountsTable,
  emailTokensTable,
  adminEmailPromotionsTable,
  accountCountsTable,
  sessionsTable,
  rateLimitsTable,
  auditEventsTable,
  billingSubscriptionsTable,
  sitesTable,
  paymentsTable,
  channelsTable,
  channelMessagesTable,
  operatorLinkCodesTable,
  operatorChatsTable,
  operatorChatUpdatesTable,
  ...MFA_TABLES,
  identitiesTable,
  linkTicketsTable,
  ...EVENT_TABLES,
  webhookInboxTable,
  dataKeyCheckTable,
  schemaMigrationsTable,
];
