import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type BotApiCall = { token: string; method: string; body: any; status: number };

/**
 * A local stand-in for the Telegram Bot API (`/bot<token>/<method>`): records every call
 * and can be told to fail the next N calls, the way the real one does under load (500,
 * 429 with retry_after) or for a chat that is gone (400, 403).
 */
export async function startBotApi() {
  const calls: BotApiCall[] = [];
  const failures: Array<{ status: number; description: string; chatId?: string }> = [];
  const server = createServer(async (req, res) => {
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? '');
    const text = await readText(req);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    const chatId = String((body as { chat_id?: unknown })?.chat_id);
    const index = failures.findIndex((f) => f.chatId === undefined || f.chatId === chatId);
    const failure = index >= 0 ? failures.splice(index, 1)[0] : undefined;
    const status = !match ? 404 : (failure?.status ?? 200);
    calls.push({ token: match?.[1] ?? '', method: match?.[2] ?? '', body, status });
    const answer =
      status === 200
        ? { ok: true, result: { message_id: calls.length, date: Math.floor(Date.now() / 1000), chat: { id: (body as any)?.chat_id }, text: (body as any)?.text } }
        : { ok: false, error_code: status, description: failure?.description ?? 'Not Found', ...(status === 429 ? { parameters: { retry_after: 1 } } : {}) };
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    /** Successful sendMessage calls. */
    sent: () => calls.filter((call) => call.method === 'sendMessage' && call.status === 200),
    /** The next `count` calls (to `chatId` only, if given) fail with `status`. */
    failNext(count: number, status: number, options: { chatId?: number | string; description?: string } = {}) {
      const description = options.description ?? (status === 429 ? 'Too Many Requests: retry after 1' : 'Internal Server Error');
      const chatId = options.chatId === undefined ? undefined : String(options.chatId);
      for (let i = 0; i < count; i++) failures.push({ status, description, chatId });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type BotApi = Awaited<ReturnType<typeof startBotApi>>;

function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
