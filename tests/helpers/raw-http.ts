import { connect, type Socket } from 'node:net';
import { refuseUndeclaredError } from './declared-errors.ts';
import { PATIENCE_MS } from './wait.ts';

export type RawAnswer = {
  /** `HTTP/1.1 413 Payload Too Large` and the like; '' if the server closed without answering. */
  statusLine: string;
  status: number;
  body: any;
  /** Request body bytes written before the answer came. */
  sentBeforeAnswer: number;
  /** Whether the server closed the connection after answering. */
  closed: boolean;
};

/**
 * A request written by hand on a socket, for what fetch will not send: a body that never
 * ends, a Content-Length far above what follows, control characters in a header. `feed`
 * writes body bytes until the server answers (and stops when it closes); the answer is read
 * as it arrives, without waiting for the request to be complete.
 */
export function rawRequest(
  url: string,
  head: string,
  feed: { chunk: Buffer; everyMs: number; upTo: number } | undefined,
  timeoutMs = PATIENCE_MS,
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(port), hostname);
    let received = '';
    let sent = 0;
    let sentBeforeAnswer: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => {
      if (received) return finish(false);
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms (sent ${sent} body bytes)`));
    }, timeoutMs);
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      clearInterval(timer);
      const [headPart, ...rest] = received.split('\r\n\r\n');
      const statusLine = headPart.split('\r\n')[0] ?? '';
      let body: unknown;
      try {
        body = JSON.parse(rest.join('\r\n\r\n'));
      } catch {
        body = undefined;
      }
      const status = Number(statusLine.split(' ')[1] ?? 0);
      socket.destroy();
      const [method = '', path = ''] = head.split('\r\n')[0].split(' ');
      try {
        refuseUndeclaredError(method, path, { status, body });
      } catch (error) {
        return reject(error);
      }
      resolve({ statusLine, status, body, sentBeforeAnswer: sentBeforeAnswer ?? sent, closed });
    };
    socket.on('connect', () => {
      socket.write(head);
      if (!feed) return;
      timer = setInterval(() => {
        if (socket.destroyed || !socket.writable || sent >= feed.upTo) return clearInterval(timer);
        socket.write(feed.chunk);
        sent += feed.chunk.length;
      }, feed.everyMs);
    });
    socket.on('data', (data) => {
      if (sentBeforeAnswer === undefined) sentBeforeAnswer = sent;
      received += data.toString('latin1');
    });
    // A reset after the answer is the server closing on a client still sending: expected.
    socket.on('error', () => (received ? finish(true) : undefined));
    socket.on('close', () => (received ? finish(true) : reject(new Error('closed without an answer'))));
  });
}

/** A connected, idle socket. */
export function openSocket(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => resolve(socket));
    socket.on('error', reject);
  });
}

/** Whether the server closes `socket` within `ms`. */
export function closedSoon(socket: Socket, ms = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
