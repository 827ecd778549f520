import pg from 'pg';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

export type BenchDatabase = { url: string; drop(): Promise<void> };

async function onServer(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh database on the server in `serverUrl`, dropped (with its connections) at the end. */
export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `gatehouse_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  await onServer(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => onServer(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** Runs `use` with a fresh database on the bench's server (DATABASE_URL, else the default), dropped afterwards. */
export async function withBenchDatabase<T>(use: (url: string) => Promise<T>): Promise<T> {
  const database = await createBenchDatabase(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  try {
    return await use(database.url);
  } finally {
    await database.drop();
  }
}
