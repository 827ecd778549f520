import type { Deps } from '../../deps.ts';
import { QUEUES } from '../../jobs.ts';
import type { Tx } from '../../lib/db.ts';
import { inTransaction } from '../../lib/queue.ts';

/** One Bot API `sendMessage` through the operator bot, as a telegram-send job. */
export type OperatorMessage = { chatId: string; text: string };

const TELEGRAM_TEXT_LIMIT = 4096;
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Queued in the caller's transaction: the message exists if and only if the effect that
 * caused it committed, and the queue retries it until the Bot API takes it.
 */
export async function enqueueOperatorMessages(deps: Deps, tx: Tx, messages: OperatorMessage[]): Promise<void> {
  if (!messages.length) return;
  if (!deps.config.operatorBotToken) {
    deps.logger.warn({ count: messages.length }, 'OPERATOR_BOT_TOKEN is not set: operator messages are not sent');
    return;
  }
  const jobs = messages.map((message) => ({
    name: QUEUES.telegramSend,
    data: { chatId: message.chatId, text: truncate(message.text, TELEGRAM_TEXT_LIMIT) },
  }));
  await deps.queue.insert(jobs, inTransaction(tx));
}

function truncate(text: string, limit: number): string {
  const chars = [...text];
  return chars.length <= limit ? text : `${chars.slice(0, limit - 1).join('')}…`;
}

/**
 * Throws when a retry may help (network, 5xx, 429, `ok: false` on a 2xx) so the queue
 * backs off and tries again. Other 4xx (chat not found, bot blocked, bad request) will
 * not get better: they are logged and given up. The URL holds the bot token, so neither
 * the URL nor a fetch error that could quote it is ever logged or rethrown.
 */
export async function sendOperatorMessage(deps: Deps, message: OperatorMessage): Promise<void> {
  const token = deps.config.operatorBotToken;
  if (!token) return;
  let response: Response;
  try {
    response = await fetch(`${deps.config.telegramApiUrl}/bot${token}/sendMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: message.chatId, text: message.text }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new Error(`Bot API request failed (${networkReason(error)})`);
  }
  const body = (await response.json().catch(() => undefined)) as { ok?: boolean; description?: string } | undefined;
  if (response.ok && body?.ok === true) return;
  if (response.ok || response.status === 429 || response.status >= 500) {
    throw new Error(`Bot API answered ${response.status}${body?.ok === false ? ' with ok:false' : ''}`);
  }
  deps.logger.warn(
    { chatId: message.chatId, status: response.status, description: String(body?.description ?? '').slice(0, 200) },
    'Bot API refused an operator message; not retrying',
  );
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  return (error as { name?: string }).name === 'TimeoutError' ? 'timeout' : 'network error';
}
