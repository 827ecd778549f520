import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** How the receiver answers: 200, 500 with a body, never (until the socket closes), by dropping the connection, or 307 to `redirectTo`. */
export type ReceiverMode = 'ok' | 'fail' | 'hang' | 'close' | 'redirect';

/** One request as the receiver saw it; `verified` is the body as `standardwebhooks` verified it, or its error. */
export type Received = { path: string; headers: Record<string, string>; body: string; at: number; verified: unknown; error?: string; mode: ReceiverMode };

/**
 * A service of the platform that receives our events: a real HTTP server on a real port that
 * checks every request with the `standardwebhooks` package (not with our own code), under
 * each secret it has been told. Its answers are switched per test.
 */
export class EventReceiver {
  readonly received: Received[] = [];
  mode: ReceiverMode = 'ok';
  secrets: string[] = [];
  redirectTo = '';
  /** What a failing receiver answers with (a test may make it hostile markup). */
  failBody = 'receiver is down for maintenance';
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();
  private readonly server = createServer((req, res) => this.handle(req, res));

  static async start(path = '/hooks'): Promise<EventReceiver> {
    const receiver = new EventReceiver(path);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  private constructor(readonly path: string) {
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${this.path}`;
  }

  /** The requests that verified under some secret, by `webhook-id`. */
  verifiedIds(): string[] {
    return this.received.filter((request) => !request.error).map((request) => request.headers['webhook-id']);
  }

  /** The verified bodies, parsed, in the order they arrived, of requests answered 200. */
  delivered(): Array<{ id: string; type: string; timestamp: string; data: any }> {
    return this.received.filter((request) => !request.error && request.mode === 'ok').map((request) => ({ id: request.headers['webhook-id'], ...(request.verified as any) }));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)]));
      const mode = this.mode;
      let verified: unknown;
      let error: string | undefined = 'no secret verified it';
      for (const secret of this.secrets) {
        try {
          verified = new Webhook(secret).verify(body, headers);
          error = undefined;
          break;
        } catch (failure) {
          error = (failure as Error).message;
        }
      }
      this.received.push({ path: req.url ?? '', headers, body, at: Date.now(), verified, error, mode });
      if (mode === 'hang') {
        this.hanging.add(res);
        return;
      }
      if (mode === 'close') {
        req.socket.destroy();
        return;
      }
      if (mode === 'redirect') {
        res.writeHead(307, { location: this.redirectTo, 'content-type': 'text/plain' }).end('moved');
        return;
      }
      if (mode === 'fail') {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(this.failBody);
        return;
      }
      res.writeHead(error ? 401 : 200, { 'content-type': 'application/json' }).end(error ? JSON.stringify({ error }) : '{"ok":true}');
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
