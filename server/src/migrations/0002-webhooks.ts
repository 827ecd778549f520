import type { Migration } from './context.ts';

export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    -- Every verified delivery, kept as received; the unique key is what makes a retry a no-op.
    CREATE TABLE webhook_inbox (
      id            uuid PRIMARY KEY,
      provider      text NOT NULL,
      scope         text NOT NULL DEFAULT '',
      external_id   text NOT NULL,
      payload       bytea NOT NULL,
      received_at   timestamptz NOT NULL,
      state         text NOT NULL DEFAULT 'received'
                    CHECK (state IN ('received', 'processed', 'ignored', 'dead')),
      attempts      integer NOT NULL DEFAULT 0,
      last_error    text,
      -- Why an entry was 'ignored' (unknown account, price or event type): kept for support.
      reason        text,
      enqueued_at   timestamptz,
      processed_at  timestamptz,
      UNIQUE (provider, scope, external_id)
    );
    CREATE INDEX webhook_inbox_pending_idx ON webhook_inbox (received_at) WHERE state = 'received';
    CREATE INDEX webhook_inbox_undispatched_idx ON webhook_inbox (received_at) WHERE state = 'received' AND enqueued_at IS NULL;

    CREATE TABLE sites (
      id                serial PRIMARY KEY,
      site_key          text NOT NULL UNIQUE,
      account_id        integer NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      name              text NOT NULL,
      secret_sealed     text NOT NULL,
      created_at        timestamptz NOT NULL
    );
    CREATE INDEX sites_account_idx ON sites (account_id);

    CREATE TABLE payments (
      site_id           integer NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      reference         text NOT NULL,
      checkout_session  text,
      status            text NOT NULL CHECK (status IN ('pending', 'paid', 'failed', 'expired', 'refunded')),
      amount            bigint,
      currency          text,
      last_event_at     timestamptz NOT NULL,
      updated_at        timestamptz NOT NULL,
      PRIMARY KEY (site_id, reference)
    );
    CREATE UNIQUE INDEX payments_checkout_idx ON payments (site_id, checkout_session) WHERE checkout_session IS NOT NULL;

    CREATE TABLE billing_subscriptions (
      subscription_id   text PRIMARY KEY,
      account_id        integer REFERENCES accounts(id) ON DELETE SET NULL,
      status            text NOT NULL,
      price_id          text,
      last_occurred_at  timestamptz NOT NULL
    );

    CREATE TABLE channels (
      id                uuid PRIMARY KEY,
      account_id        integer NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      platform          text NOT NULL CHECK (platform IN ('messengerone', 'messengertwo')),
      name              text NOT NULL,
      bot_token_sealed  text NOT NULL,
      secret_sealed     text,
      created_at        timestamptz NOT NULL
    );
    CREATE INDEX channels_account_idx ON channels (account_id);

    CREATE TABLE channel_messages (
      id                bigserial PRIMARY KEY,
      channel_id        uuid NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
      conversation_id   text NOT NULL,
      external_user_id  text NOT NULL,
      text              text NOT NULL,
      inbox_id          uuid NOT NULL UNIQUE REFERENCES webhook_inbox(id),
      created_at        timestamptz NOT NULL
    );
    CREATE INDEX channel_messages_channel_idx ON channel_messages (channel_id, created_at);

    CREATE TABLE operator_link_codes (
      code_hash   bytea PRIMARY KEY,
      account_id  integer NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      expires_at  timestamptz NOT NULL,
      used_at     timestamptz
    );
    CREATE INDEX operator_link_codes_account_idx ON operator_link_codes (account_id);

    CREATE TABLE operator_chats (
      account_id  integer NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      chat_id     bigint NOT NULL,
      linked_at   timestamptz NOT NULL,
      PRIMARY KEY (account_id, chat_id)
    );
    CREATE INDEX operator_chats_chat_idx ON operator_chats (chat_id);
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql(`DROP TABLE operator_chats, operator_link_codes, channel_messages, channels,
    billing_subscriptions, payments, sites, webhook_inbox`);
};
