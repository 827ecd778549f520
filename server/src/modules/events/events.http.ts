import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/**
 * One POST of an event with keep-alive connections, on node:http rather than fetch: a send
 * is a few headers and a small body, and fetch's streams, abort signals and Request objects
 * cost more CPU than the request itself (a profile of the sender under load: a sixth of its
 * time). Connections to an endpoint stay open between sends, up to the sender's places.
 */
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

export type PostAnswer = { status: number; body: string };

/**
 * Resolves with the status, and for an answer that is not a 2xx the start of its body (up to
 * `keepBytes`) without waiting for the rest; rejects on a connection failure, or with a
 * TimeoutError when no answer came within `timeoutMs`. A redirect is an answer like any
 * other (it is not followed). Credentials in the URL go as Basic authorization.
 */
export function postEvent(url: URL, headers: Record<string, string>, body: string, timeoutMs: number, keepBytes: number): Promise<PostAnswer> {
  const https = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | undefined, answer?: PostAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(answer!);
    };
    const req = (https ? httpsRequest : httpRequest)(
      url,
      { method: 'POST', agent: https ? agents.https : agents.http, headers: { ...headers, 'content-length': Buffer.byteLength(body).toString() } },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        // A 2xx is the answer; its body is read and dropped, so the connection can serve the next send.
        if (status >= 200 && status < 300) {
          res.resume();
          finish(undefined, { status, body: '' });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => finish(undefined, { status, body: Buffer.concat(chunks).subarray(0, keepBytes).toString('utf8') });
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= keepBytes) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      const error = new Error(`no answer within ${timeoutMs} ms`);
      error.name = 'TimeoutError';
      finish(error);
      req.destroy();
    }, timeoutMs);
    req.on('error', (error) => finish(error));
    req.end(body);
  });
}
