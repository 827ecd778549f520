import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

/**
 * Where the receiver below keeps nothing: it verifies, parses and answers 200 without its
 * INSERT. No ingest that verifies and parses a delivery in Node answers faster on this
 * machine, however it stores it: the ceiling that the ingest rows are read against.
 */
export const UNSTORED_PATH = '/unstored';

/**
 * The reference for webhook ingest: the receiver Stripe's docs sketch, written by hand with
 * nothing between it and Node: read the raw body, check `Stripe-Signature` (HMAC-SHA256 of
 * `t.body` under the endpoint secret, five minutes' tolerance), INSERT the event as one row
 * (a duplicate id is not stored twice), answer 200 once the row is committed. No framework,
 * no queue, no worker: what our intake costs beyond this is the framework, the inbox's
 * guarantees and the work it does for the worker.
 */
export async function startIngestFloor(databaseUrl: string, secret: string): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  await pool.query(`CREATE TABLE IF NOT EXISTS bench_floor_inbox (
    event_id text PRIMARY KEY, payload bytea NOT NULL, received_at timestamptz NOT NULL DEFAULT now())`);

  const verified = (raw: Buffer, header: string | undefined): boolean => {
    const parts = new Map((header ?? '').split(',').map((part) => part.split('=', 2) as [string, string]));
    const timestamp = Number(parts.get('t'));
    const given = Buffer.from(parts.get('v1') ?? '', 'hex');
    if (!Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > 300) return false;
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(raw).digest();
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const answer = (status: number, body: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(body);
      if (!verified(raw, req.headers['stripe-signature'] as string | undefined)) return answer(400, '{"error":"bad signature"}');
      let id: string;
      try {
        id = JSON.parse(raw.toString('utf8')).id;
      } catch {
        return answer(400, '{"error":"bad json"}');
      }
      if (req.url === UNSTORED_PATH) return answer(200, '{"received":true}');
      pool.query('INSERT INTO bench_floor_inbox (event_id, payload) VALUES ($1, $2) ON CONFLICT DO NOTHING', [id, raw]).then(
        () => answer(200, '{"received":true}'),
        () => answer(500, '{"error":"not stored"}'),
      );
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeIdleConnections();
      await closed;
      await pool.end();
    },
  };
}
