import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';

export type TestDatabase = { env: Record<string, string>; drop(): Promise<void> };

/** Initialising a PGlite directory takes seconds; each suite copies a ready one. */
export const EMBEDDED_TEMPLATE = join(tmpdir(), 'gatehouse-pglite-template-0.5.14');

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

/** A copy of the embedded template in a temporary DATA_DIR, whatever DATABASE_URL says: for what only the embedded database has. */
export async function createEmbeddedDatabase(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
  await ensureEmbeddedTemplate();
  cpSync(EMBEDDED_TEMPLATE, join(dataDir, 'pgdata'), { recursive: true });
  return { env: { DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

/**
 * A fresh database per suite: on the server in DATABASE_URL when set (CI runs both), else
 * a copy of the embedded template in a temporary DATA_DIR.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return createEmbeddedDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
  const name = `gatehouse_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: url.toString() },
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
