import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createInboxWriter, type Queryable } from '../server/src/index.ts';

/**
 * Where the receiver below keeps nothing: it verifies, parses and answers 200 without its
 * INSERT. No ingest that verifies and parses a delivery in Node answers faster on this
 * machine, however it stores it: the ceiling that the ingest rows are read against.
 */
export const UNSTORED_PATH = '/unstored';

/**
 * Where the receiver below keeps each delivery as our intake does, without a framework or a
 * worker: the inbox's own writer (webhooks/inbox/writer.ts: its group commit, its multi-row
 * INSERT … ON CONFLICT), into a copy of the inbox's table with all its indexes. What storing
 * a delivery durably our way reaches on this machine; our ingest row against it is what the
 * framework (Koa, the middleware, the routes) and the worker beside it cost.
 */
export const GROUPED_PATH = '/grouped';

/**
 * The inbox's statements, sent to `bench_grouped_inbox` instead of `webhook_inbox`: the same
 * SQL, parameters and prepared name but for the table, so that the service's worker never
 * sees these rows.
 */
function onCopyOfInbox(pool: pg.Pool): Queryable {
  return {
    async query<Row>(query: Parameters<Queryable['query']>[0], values?: unknown[]): Promise<Row[]> {
      const { name, text } = typeof query === 'string' ? { name: undefined, text: query } : query;
      if (!/^INSERT INTO webhook_inbox /.test(text)) throw new Error(`not an inbox insert: ${text.slice(0, 40)}`);
      const copy = { name: name && `bench_grouped_${name}`, text: text.replace('INSERT INTO webhook_inbox ', 'INSERT INTO bench_grouped_inbox ') };
      return (await pool.query(copy, values)).rows as Row[];
    },
  };
}

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
  // The service has made the inbox's table by now (its migrations run at start).
  await pool.query('CREATE TABLE IF NOT EXISTS bench_grouped_inbox (LIKE webhook_inbox INCLUDING ALL)');
  // Nothing listens for its commits: no worker takes these rows.
  const grouped = createInboxWriter({ db: { ...onCopyOfInbox(pool), embedded: false }, clock: { now: () => new Date() }, inboxKept: { notify() {}, listen: () => () => {} } });

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
      if (req.url === GROUPED_PATH) {
        grouped.write({ provider: 'payment', scope: 'bench', externalId: id, payload: raw }).then(
          () => answer(200, '{"received":true}'),
          () => answer(500, '{"error":"not stored"}'),
        );
        return;
      }
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
