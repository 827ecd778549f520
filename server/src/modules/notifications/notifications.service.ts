import { randomInt } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { sha256 } from '../../lib/crypto.ts';
import type { Queryable } from '../../lib/db.ts';
import * as repo from './notifications.repo.ts';

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
  await repo.insertLinkCode(deps.db, { code_hash: sha256(normalizeLinkCode(code)), account_id: accountId, expires_at: expiresAt });
  return { code, expiresAt: expiresAt.toISOString() };
}

export async function notificationStatus(deps: Deps, accountId: number) {
  const chats = await repo.countChats(deps.db, accountId);
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
  const accountId = await repo.spendLinkCode(tx, sha256(normalizeLinkCode(code)), at);
  if (accountId === undefined) return false;
  await repo.insertChat(tx, { account_id: accountId, chat_id: chatId, linked_at: deps.clock.now() });
  return true;
}

/**
 * Whether a `/start` or `/stop` of the chat (Telegram's `update_id`) is newer than every
 * one applied to it, recorded as the newest if so. An older one must change nothing: worker
 * lanes can apply a chat's commands out of order, and an operator can replay an old one.
 */
export function isNewestChatCommand(tx: Queryable, chatId: string, updateId: number): Promise<boolean> {
  return repo.claimChatUpdate(tx, chatId, updateId);
}

/** `/stop`: the chat gets no more visitor messages, whichever account it was linked to. */
export async function unlinkChat(tx: Queryable, chatId: string): Promise<void> {
  await repo.deleteChat(tx, chatId);
}
