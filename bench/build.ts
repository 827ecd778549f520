import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export type BenchBuild = { dir: string; remove(): void };

/**
 * `npm run build` into a directory of its own, plus the bench's service process
 * (bench/serve.ts as `bench-serve.js`) bundled with the same settings: the bench measures
 * the JavaScript the image runs, not tsx's on-the-fly compilation of the sources (which
 * keeps function names with a helper call per closure, a cost production never pays).
 * Inside the repository, so that the packages the bundle leaves external resolve.
 */
export function buildForBench(): BenchBuild {
  mkdirSync(join(ROOT, '.build'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.build', 'bench-'));
  const built = spawnSync(process.execPath, ['build.mjs', `--outdir=${dir}`, '--entry=bench-serve=bench/serve.ts'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`build failed: ${built.stderr}`);
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
