// Runs every tests/**/*.test.ts in its own process (a fresh service and database each),
// two at a time, and closes with the line CI reads: "N passed, N failed".
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const filter = process.argv.slice(2);

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'helpers' ? [] : findTests(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const files = findTests(join(root, 'tests'))
  .filter((file) => !filter.length || filter.some((f) => file.includes(f)))
  .sort();

// TEST_ORDER=reverse runs each file's tests last to first: no test may need another's leftovers.
const orderImport = process.env.TEST_ORDER === 'reverse' ? ['--import', './tests/helpers/reverse-order.mjs'] : [];

const stripAnsi = (text) => text.replace(/\x1b\[[0-9;]*m/g, '');
const count = (text, label) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(text)?.[1] ?? NaN);

async function prepareEmbeddedTemplate() {
  if (process.env.DATABASE_URL) return;
  await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', "await (await import('./tests/helpers/database.ts')).ensureEmbeddedTemplate()"], {
      cwd: root,
      stdio: 'inherit',
    });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error('could not prepare the embedded database template'))));
  });
}

function runFile(file) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', ...orderImport, file], { cwd: root, env: { ...process.env, FORCE_COLOR: '0' } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    // Generous: the CLI suite spawns some forty processes, each opening the database.
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const text = stripAnsi(output);
      const total = count(text, 'Total');
      const passed = count(text, 'Passed');
      const skipped = count(text, 'Skipped') || 0;
      const finished = Number.isFinite(total) && Number.isFinite(passed);
      const failed = finished ? total - passed - skipped : 1;
      resolve({ file, code, text, passed: finished ? passed : 0, failed: code !== 0 && failed === 0 ? 1 : failed, skipped, ms: Date.now() - started });
    });
  });
}

await prepareEmbeddedTemplate();
console.log(`running ${files.length} test files on ${process.env.DATABASE_URL ? 'PostgreSQL at DATABASE_URL' : 'the embedded database'}`);
const queue = [...files];
const results = [];
const workers = Array.from({ length: Number(process.env.TEST_CONCURRENCY ?? 2) }, async () => {
  while (queue.length) {
    const result = await runFile(queue.shift());
    results.push(result);
    const name = relative(root, result.file);
    console.log(`${result.failed ? 'FAIL' : 'ok  '} ${name}  (${result.passed} passed, ${result.failed} failed, ${(result.ms / 1000).toFixed(1)} s)`);
    if (result.failed || result.skipped) console.log(result.text.split('\n').map((line) => `    ${line}`).join('\n'));
  }
});
await Promise.all(workers);

const passed = results.reduce((sum, r) => sum + r.passed, 0);
const failed = results.reduce((sum, r) => sum + r.failed, 0);
const skipped = results.reduce((sum, r) => sum + r.skipped, 0);
console.log(skipped ? `${passed} passed, ${failed} failed, ${skipped} skipped` : `${passed} passed, ${failed} failed`);
process.exit(failed || !files.length ? 1 : 0);
