/**
 * Start-up time: from spawning a process to its first 200 from `/readyz`, on PostgreSQL with
 * the migrations already applied (a restart, the common case). Measured for the built service
 * (what the image runs), for `npm start`'s path (tsx compiling TypeScript at start), and for
 * a bare Node HTTP server as the baseline, each run in turn so machine noise weighs on all.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../tests/helpers/service.ts';
import { median } from './measurement.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = 5;
const TIMEOUT_MS = 60_000;

type Variant = { id: string; label: string; args(buildDir: string): string[] };

const BARE_SERVER = "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')";

const VARIANTS: Variant[] = [
  { id: 'bare', label: 'bare Node HTTP server (baseline)', args: () => ['-e', BARE_SERVER] },
  { id: 'built', label: 'built service: `node dist/main.js` (the image)', args: (dir) => [join(dir, 'main.js'), '--role=all'] },
  { id: 'tsx', label: '`npm start` path: tsx, TypeScript compiled at start', args: () => ['--import', 'tsx', 'gateway/src/main.ts', '--role=all'] },
];

async function timeToReady(args: string[], env: Record<string, string>): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...env, PORT: String(port) }, stdio: 'ignore' });
  try {
    while (performance.now() - started < TIMEOUT_MS) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited ${child.exitCode} before it was ready`);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((response) => response.ok, () => false);
      if (ready) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`${args.join(' ')} not ready within ${TIMEOUT_MS} ms`);
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  }
}


/** The start-up table for docs/BENCHMARKS.md, as markdown lines. */
export async function measureStartup(databaseUrl: string, buildDir: string): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-startup-'));
  try {
    const env = {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      JWT_SECRET: randomBytes(32).toString('hex'),
      DATA_KEY: randomBytes(32).toString('hex'),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    };
    // The first start applies the migrations; what follows measures restarts.
    await timeToReady(VARIANTS[1].args(buildDir), env);
    const times = new Map(VARIANTS.map((variant) => [variant.id, [] as number[]]));
    for (let run = 0; run < RUNS; run++) {
      for (const variant of VARIANTS) times.get(variant.id)!.push(await timeToReady(variant.args(buildDir), env));
    }
    const bare = median(times.get('bare')!);
    return [
      `Start to the first \`/readyz\` 200 (median of ${RUNS} starts each, in turn; PostgreSQL, migrations already applied):`,
      '',
      '| process | start to ready | ratio |',
      '|---|---:|---|',
      ...VARIANTS.map((variant) => {
        const ms = median(times.get(variant.id)!);
        return `| ${variant.label} | ${Math.round(ms).toLocaleString('en-US')} ms | ${variant.id === 'bare' ? 'baseline' : `${(ms / bare).toFixed(1)}x bare`} |`;
      }),
    ];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
