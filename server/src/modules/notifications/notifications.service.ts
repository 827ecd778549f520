import { randomInt } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { sha256 } from '../../lib/crypto.ts';
import type { Queryable } from '../../lib/db.ts';

const LINK_CODE_TTL_MS = 15 * 60 * 1000;

// No 0/O, 1/I/L: the code may be read off a screen and typed into a chat.
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 12;

/**
 * A one-time code for `/start <code>` in the operator bot. About 59 bits, single use and
 * 15 minutes long; only its hash is stored. The dash only helps reading: it is ignored
 * when the code is redeemed, and Telegram deep links (`?start=`) accept it.
 */
export async function createLinkCode(deps: Deps, accountId: number) {
  const chars = Array.from({ length: CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]);
  const code = `${chars.slice(0, 6).join('')}-${chars.slice(6).join('')}`;
  const expiresAt = new Date(deps.clock.now().getTime() + LINK_CODE_TTL_MS);
  await deps.db.query('INSERT INTO operator_link_codes (code_hash, account_id, expires_at) VALUES ($1, $2, $3)', [
    sha256(normalizeLinkCode(code)),
    accountId,
    expiresAt,
  ]);
  return { code, expiresAt: expiresAt.toISOString() };
}

export async function notificationStatus(deps: Deps, accountId: number) {
  const [row] = await deps.db.query<{ chats: string }>('SELECT count(*) AS chats FROM operator_chats WHERE account_id = $1', [accountId]);
  const chats = Number(row?.chats ?? 0);
  return { linked: chats > 0, chats };
}

/** People retype codes: case and separators do not matter. */
function normalizeLinkCode(code: string): string {
  return code.toUpperCase().replace(/[^A-Z0-9]/g, '');
}

/**
 * `/start <code>` in the operator bot: links the chat to the code's account. Codes are
 * single use and checked against `at`, when the message arrived, not when it is processed.
 * False for an unknown, used or expired code.
 */
export async function linkChatWithCode(deps: Pick<Deps, 'clock'>, tx: Queryable, code: string, chatId: string, at: Date): Promise<boolean> {
  const [used] = await tx.query<{ account_id: number }>(
    `UPDATE operator_link_codes SET used_at = $2
     WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING account_id`,
    [sha256(normalizeLinkCode(code)), at],
  );
  if (!used) return false;
  await tx.query('INSERT INTO operator_chats (account_id, chat_id, linked_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
    used.account_id,
    chatId,
    deps.clock.now(),
  ]);
  return true;
}

/** `/stop`: the chat gets no more visitor messages, whichever account it was linked to. */
export async function unlinkChat(tx: Queryable, chatId: string): Promise<void> {
  await tx.query('DELETE FROM operator_chats WHERE chat_id = $1', [chatId]);
}
