import type { LookupFunction } from 'node:net';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { ResolvedAddress } from '../../lib/resolver.ts';

/**
 * One POST of an event with keep-alive connections, on node:http rather than fetch: a send
 * is a few headers and a small body, and fetch's streams, abort signals and Request objects
 * cost more CPU than the request itself (a profile of the sender under load: a sixth of its
 * time). Connections to an endpoint stay open between sends, up to the sender's places.
 * These agents are the sender's own: no HTTP(S)_PROXY of the environment ever applies to them.
 */
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/**
 * A lookup that answers the address the sender checked, whatever the name would resolve to
 * now: the connection goes where the check said it may (events.targets.ts), never to a later
 * answer of the same name. Node asks for every address when it tries families in turn.
 */
function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) (callback as (error: null, addresses: ResolvedAddress[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
}

export type PostAnswer = { status: number; body: string };

/**
 * Resolves with the status, and for an answer that is not a 2xx the start of its body (up to
 * `keepBytes`) without waiting for the rest; rejects on a connection failure, or with a
 * TimeoutError when no answer came within `timeoutMs`. A redirect is an answer like any
 * other (it is not followed). The connection goes to `address` alone, with the URL's host in
 * the Host header and, over https, as the name the certificate must hold.
 */
export function postEvent(url: URL, address: ResolvedAddress, headers: Record<string, string>, body: string, timeoutMs: number, keepBytes: number): Promise<PostAnswer> {
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
      {
        method: 'POST',
        agent: https ? agents.https : agents.http,
        lookup: pinnedLookup(address),
        headers: { ...headers, 'content-length': Buffer.byteLength(body).toString() },
      },
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
