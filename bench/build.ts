import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Runs `use` with `npm run build` done into a directory of its own (removed afterwards), plus the bench's service process
 * (bench/serve.ts as `bench-serve.js`) bundled with the same settings: the bench measures
 * the JavaScript the image runs, not tsx's on-the-fly compilation of the sources (which
 * keeps function names with a helper call per closure, a cost production never pays).
 * Inside the repository, so that the packages the bundle leaves external resolve.
 */
export async function withBenchBuild<T>(use: (buildDir: string) => Promise<T>): Promise<T> {
  mkdirSync(join(ROOT, '.build'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.build', 'bench-'));
  try {
    const built = spawnSync(process.execPath, ['build.mjs', `--outdir=${dir}`, '--entry=bench-serve=bench/serve.ts'], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`build failed: ${built.stderr}`);
    return await use(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
