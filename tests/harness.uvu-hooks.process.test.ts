import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

// uvu drops an error a suite's `before` hook throws; tests/run.mjs loads uvu-loud-hooks.mjs
// so that every test file's uvu prints it. Here a file whose `before` throws is run as the
// runner runs files: with the hooks, as TEST_ORDER=reverse adds its own, and without.

const test = suite('the test harness: an error a before hook throws is printed');

const root = fileURLToPath(new URL('..', import.meta.url));
const MARKER = 'the-service-could-not-start-7f3a';

function runThrowingSuite(imports: string[]): string {
  // Inside the repository, so that 'uvu' resolves from its node_modules.
  const dir = join(root, '.build', `uvu-hooks-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'throwing.test.ts');
  writeFileSync(
    file,
    `import { suite } from 'uvu';
const test = suite('a suite that cannot start');
test.before(async () => { throw new Error('${MARKER}'); });
test('never runs', () => {});
test.run();
`,
  );
  try {
    const ran = spawnSync(process.execPath, ['--import', 'tsx', ...imports.flatMap((hook) => ['--import', hook]), file], { cwd: root, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } });
    return `${ran.stdout}${ran.stderr}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("uvu alone drops the hook's error: the file shows its tests not run, and no reason", () => {
  const output = runThrowingSuite([]);
  assert.match(output, /Passed:\s+0/);
  assert.not.match(output, new RegExp(MARKER));
});

test('with the hooks the runner loads, the error and its suite are printed', () => {
  const output = runThrowingSuite(['./tests/helpers/uvu-loud-hooks.mjs']);
  assert.match(output, `the before hook of "a suite that cannot start" threw, so none of its tests ran:\nError: ${MARKER}`);
});

test('and in reverse order (TEST_ORDER=reverse) as well', () => {
  const output = runThrowingSuite(['./tests/helpers/reverse-order.mjs', './tests/helpers/uvu-loud-hooks.mjs']);
  assert.match(output, `Error: ${MARKER}`);
});

test.run();
