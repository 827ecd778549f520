import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

// No dead exports: knip (knip.json: the entry points are the service, the CLI, the client, the
// bench, the scripts and the tests) lists every export and exported type that nothing imports.
// An export kept for a caller knip cannot see is tagged `@public` where it is declared, saying who.

const root = fileURLToPath(new URL('..', import.meta.url));
const test = suite('exports: nothing is exported that nothing imports');

function knip(...args: string[]) {
  return spawnSync(process.execPath, [fileURLToPath(new URL('../node_modules/knip/bin/knip.js', import.meta.url)), '--include', 'exports,types,nsExports,nsTypes', '--no-progress', ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 240_000,
  });
}

test('knip finds no unused export or exported type', () => {
  const result = knip();
  assert.is(result.error, undefined, String(result.error));
  assert.is(result.status, 0, `knip found unused exports (remove them, or tag a deliberate one @public saying who uses it):\n${result.stdout}${result.stderr}`);
});

test.run();
