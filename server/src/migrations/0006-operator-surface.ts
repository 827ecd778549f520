import type { Migration } from './context.ts';

/**
 * Operator surface (docs/API.md, Operator API):
 * - the inbox is listed newest first, filtered by provider and/or state: an index for each
 *   combination, so a page costs a few index pages however many million rows there are;
 * - retention deletes old inbox rows, so a stored visitor message no longer holds its
 *   delivery's row: the link is forgotten instead (its dedupe job is long done).
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    CREATE INDEX webhook_inbox_recent_idx ON webhook_inbox (received_at DESC, id DESC);
    CREATE INDEX webhook_inbox_provider_recent_idx ON webhook_inbox (provider, received_at DESC, id DESC);
    CREATE INDEX webhook_inbox_state_recent_idx ON webhook_inbox (state, received_at DESC, id DESC);
    CREATE INDEX webhook_inbox_provider_state_recent_idx ON webhook_inbox (provider, state, received_at DESC, id DESC);

    ALTER TABLE channel_messages
      ALTER COLUMN inbox_id DROP NOT NULL,
      DROP CONSTRAINT channel_messages_inbox_id_fkey,
      ADD CONSTRAINT channel_messages_inbox_id_fkey FOREIGN KEY (inbox_id) REFERENCES webhook_inbox(id) ON DELETE SET NULL;
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql(`
    ALTER TABLE channel_messages
      DROP CONSTRAINT channel_messages_inbox_id_fkey,
      ADD CONSTRAINT channel_messages_inbox_id_fkey FOREIGN KEY (inbox_id) REFERENCES webhook_inbox(id);
    DROP INDEX webhook_inbox_provider_state_recent_idx, webhook_inbox_state_recent_idx,
      webhook_inbox_provider_recent_idx, webhook_inbox_recent_idx;
  `);
};
