import type { Migration } from './context.ts';

/**
 * operator_chat_updates: the newest operator-bot command (`/start`, `/stop`) applied to each
 * chat, by Telegram's update_id. A command older than it changes nothing: not when worker
 * lanes apply a chat's commands out of order, nor when an operator replays an old one
 * (docs/API.md, Operator API: a replayed older event never undoes a newer state). Kept after
 * `/stop` deletes the chat's link, which is why it is a table of its own.
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`
    CREATE TABLE operator_chat_updates (
      chat_id    bigint PRIMARY KEY,
      update_id  bigint NOT NULL
    );
  `);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql('DROP TABLE operator_chat_updates');
};
