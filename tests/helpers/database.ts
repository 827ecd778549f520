import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { QUEUE_POLICIES } from '../../server/src/jobs.ts';
import { createSecretBox } from '../../server/src/lib/crypto.ts';
import { createDatabase } from '../../server/src/lib/db.ts';
import { createLogger } from '../../server/src/lib/logger.ts';
import { startQueue } from '../../server/src/lib/queue.ts';
import { migrate } from '../../server/src/migrations/index.ts';

export type TestDatabase = { env: Record<string, string>; drop(): Promise<void> };

/** Initialising a PGlite directory takes seconds; each suite copies a ready one. */
// In the run's shared scratch directory (tests/run.mjs), not the test process's own TMPDIR: it outlives the file that made it.
export const EMBEDDED_TEMPLATE = join(process.env.GATEHOUSE_TEST_SHARED_DIR ?? tmpdir(), 'gatehouse-pglite-template-0.5.14');

export async function ensureEmbeddedTemplate(): Promise<void> {
  if (existsSync(join(EMBEDDED_TEMPLATE, 'PG_VERSION'))) return;
  const building = mkdtempSync(join(tmpdir(), 'gatehouse-template-'));
  const db = await PGlite.create(building);
  await db.close();
  try {
    cpSync(building, EMBEDDED_TEMPLATE, { recursive: true, errorOnExist: false });
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}

/**
 * Set by tests/run.mjs for its test processes: a database already migrated (with the job
 * queue's schema), that suites starting a service copy instead of migrating their own. On
 * PostgreSQL it is the name of a template database, on the embedded one a data directory.
 */
const MIGRATED_TEMPLATE = process.env.GATEHOUSE_TEST_MIGRATED_TEMPLATE;

export type DatabaseOptions = {
  /** Start from the run's migrated template when there is one: the service then has nothing to migrate. */
  migrated?: boolean;
};

/** A copy of the embedded template in a temporary DATA_DIR, whatever DATABASE_URL says: for what only the embedded database has. */
export async function createEmbeddedDatabase(options: DatabaseOptions = {}): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
  const migrated = options.migrated && MIGRATED_TEMPLATE && !process.env.DATABASE_URL ? MIGRATED_TEMPLATE : undefined;
  if (!migrated) await ensureEmbeddedTemplate();
  cpSync(migrated ?? EMBEDDED_TEMPLATE, join(dataDir, 'pgdata'), { recursive: true });
  return { env: { DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

/**
 * A fresh database per suite: on the server in DATABASE_URL when set (CI runs both), else
 * a copy of the embedded template in a temporary DATA_DIR. Empty unless `options.migrated`.
 */
export async function createTestDatabase(options: DatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return createEmbeddedDatabase(options);
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
  const name = `gatehouse_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  // PostgreSQL 15 copies a template block by block through the WAL by default; copying its files
  // took a third less of the server's CPU per database here, and a run makes hundreds of them.
  const fileCopy = Number((await admin.query('SHOW server_version_num')).rows[0].server_version_num) >= 150000 ? ' STRATEGY FILE_COPY' : '';
  await admin.query(options.migrated && MIGRATED_TEMPLATE ? `CREATE DATABASE ${name} TEMPLATE ${MIGRATED_TEMPLATE}${fileCopy}` : `CREATE DATABASE ${name}${fileCopy}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: url.toString() },
    async drop() {
      await dropDatabase(serverUrl, name);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Migrates a database for one test run to copy (what GATEHOUSE_TEST_MIGRATED_TEMPLATE names):
 * the migrations and the job queue's schema, as a first start leaves them, but no data-key
 * check, since every suite has keys of its own. Returns its name (PostgreSQL) or its data
 * directory (embedded), and how to remove it. tests/run.mjs calls it by name, in the script
 * of a child process: `@public` tells the unused-export check so.
 *
 * @public
 */
export async function prepareMigratedTemplate(): Promise<{ template: string; remove(): Promise<void> }> {
  const serverUrl = process.env.DATABASE_URL;
  let database: TestDatabase;
  let template: string;
  if (serverUrl) {
    template = `gatehouse_template_${process.pid}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${template}`);
    await admin.query(`CREATE DATABASE ${template}`);
    await admin.end();
    const url = new URL(serverUrl);
    url.pathname = `/${template}`;
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
    database = {
      env: { DATABASE_URL: url.toString(), DATA_DIR: dataDir },
      async drop() {
        await dropDatabase(serverUrl, template);
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } else {
    database = await createEmbeddedDatabase();
    template = join(database.env.DATA_DIR, 'pgdata');
  }
  const logger = createLogger('warn');
  const dataKeys = [randomBytes(32)];
  const db = await createDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR, poolMax: 2, logger });
  try {
    await migrate(db, logger, { secretBox: createSecretBox(dataKeys), dataKeys });
    const queue = await startQueue({ db, logger, supervise: false, queues: QUEUE_POLICIES });
    await queue.stop({ graceful: true, wait: true });
  } finally {
    await db.close();
  }
  return { template, remove: () => database.drop() };
}

async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.end();
}
