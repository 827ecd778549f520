import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { Logger } from './logger.ts';

export type EmbeddedPostgres = { url: string; stop(): Promise<void> };

/**
 * PGlite behind a loopback socket, so the same pg driver, Sequelize and pg-boss code runs
 * on it as on a real server. It has one backend: callers must keep to one connection.
 */
export async function startEmbeddedPostgres(dataDir: string, logger: Logger): Promise<EmbeddedPostgres> {
  const directory = resolve(join(dataDir, 'pgdata'));
  // PGlite.create does not create parent folders.
  mkdirSync(directory, { recursive: true });
  const started = Date.now();
  const db = await PGlite.create(directory);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
  await server.start();
  const address = server.getServerConn();
  logger.info({ directory, ms: Date.now() - started }, 'embedded PostgreSQL ready');
  return {
    url: `postgres://postgres@${address}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
