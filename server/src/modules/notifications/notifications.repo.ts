import type { Queryable } from '../../lib/db.ts';
import type { LinkCodeRecord, OperatorChatRecord } from './notifications.model.ts';

// Every statement on operator_link_codes and operator_chats (notifications.model.ts).

export async function insertLinkCode(db: Queryable, code: Omit<LinkCodeRecord, 'used_at'>): Promise<void> {
  await db.query('INSERT INTO operator_link_codes (code_hash, account_id, expires_at) VALUES ($1, $2, $3)', [code.code_hash, code.account_id, code.expires_at]);
}

/** Uses a live code once; the account it was for, or undefined. */
export async function spendLinkCode(tx: Queryable, codeHash: Buffer, at: Date): Promise<number | undefined> {
  const [used] = await tx.query<Pick<LinkCodeRecord, 'account_id'>>(
    `UPDATE operator_link_codes SET used_at = $2
     WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING account_id`,
    [codeHash, at],
  );
  return used?.account_id;
}

export async function countChats(db: Queryable, accountId: number): Promise<number> {
  const [row] = await db.query<{ chats: string }>('SELECT count(*) AS chats FROM operator_chats WHERE account_id = $1', [accountId]);
  return Number(row?.chats ?? 0);
}

export async function insertChat(tx: Queryable, chat: OperatorChatRecord): Promise<void> {
  await tx.query('INSERT INTO operator_chats (account_id, chat_id, linked_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [chat.account_id, chat.chat_id, chat.linked_at]);
}

/**
 * Records `updateId` as the chat's newest command, if it is newer than the one recorded; false
 * when it is not. Two at once for one chat take turns on its row, and the older loses.
 */
export async function claimChatUpdate(tx: Queryable, chatId: string, updateId: number): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO operator_chat_updates (chat_id, update_id) VALUES ($1, $2)
     ON CONFLICT (chat_id) DO UPDATE SET update_id = EXCLUDED.update_id WHERE operator_chat_updates.update_id < EXCLUDED.update_id
     RETURNING 1`,
    [chatId, updateId],
  );
  return rows.length > 0;
}

export async function deleteChat(tx: Queryable, chatId: string): Promise<void> {
  await tx.query('DELETE FROM operator_chats WHERE chat_id = $1', [chatId]);
}

/** The chats linked to the account: where its visitors' messages go (channels/, in a delivery's transaction). */
export async function chatsOf(tx: Queryable, accountId: number): Promise<string[]> {
  const chats = await tx.query<Pick<OperatorChatRecord, 'chat_id'>>({ name: 'visitor_operator_chats', text: 'SELECT chat_id FROM operator_chats WHERE account_id = $1' }, [accountId]);
  return chats.map((chat) => chat.chat_id);
}
